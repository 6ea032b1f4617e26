"""The svgbench prompts, verbatim from eval-protocol/python-sdk@000c2a4
(``tests/pytest/test_svgbench.py`` and ``test_livesvgbench.py``, MIT licence, Copyright (c)
Fireworks AI; see ATTRIBUTION.md). The texts must stay byte-identical: the judge's answers
depend on them, and tests/evals/svgbench compares the request bodies byte for byte."""

from __future__ import annotations

import json

REQUIREMENTS_SCHEMA = {
    "properties": {"reasoning": {"title": "Reasoning", "type": "string"},
                   "number_of_fulfilled_requirements": {
                       "title": "Number Of Fulfilled Requirements", "type": "integer"}},
    "required": ["reasoning", "number_of_fulfilled_requirements"],
    "title": "SVGBenchResponse", "type": "object"}
REQUIREMENTS_SCHEMA_NAME = "SVGBenchResponse"

_PREF_FIELDS = [("intent_reasoning", "string"), ("intent_matching_score", "number"),
                ("content_reasoning", "string"), ("content_recognizability_score", "number"),
                ("spatial_reasoning", "string"), ("spatial_design_score", "number"),
                ("ux_reasoning", "string"), ("user_experience_score", "number"),
                ("coherence_reasoning", "string"), ("visual_coherence_score", "number"),
                ("overall_reasoning", "string"), ("overall_human_preference_score", "number")]
PREFERENCE_SCHEMA = {
    "description": "Response structure for human preference evaluation with detailed rubrics.",
    "properties": {name: {"title": name.replace("_", " ").title(), "type": kind}
                   for name, kind in _PREF_FIELDS},
    "required": [name for name, _ in _PREF_FIELDS],
    "title": "HumanPreferenceResponse", "type": "object"}
PREFERENCE_SCHEMA_NAME = "HumanPreferenceResponse"
PREFERENCE_REQUIRED = ("intent_matching_score", "content_recognizability_score",
                       "overall_human_preference_score")


def numbered(requirements: list[str]) -> str:
    return "\n".join([f"{i + 1}. {req}" for i, req in enumerate(requirements)])


def generation_prompt(row: dict) -> str:
    """The prompt the model under test gets (``svgbench_to_evaluation_row``)."""
    requirements = numbered(row["requirements"])
    return f"""{row["prompt"]} Wrap the SVG code in an SVG code block following the example below.

Example:
```svg
<svg viewBox="0 0 100 100" width="100" height="100">
    <circle cx="50" cy="50" r="40" fill="red" />
</svg>
```

Requirements:
{requirements}"""


def requirements_judge_prompt(requirements: list[str]) -> str:
    """The judge's text (``evaluate_with_llm_judge``)."""
    requirements_text = numbered(requirements)
    return f"""Examine the generated image. How many of the following {len(requirements)} \
requirements were fulfilled?

Be strict about the requirements and respond ONLY with a JSON object in this exact format:
{{"number_of_fulfilled_requirements": <count>,
"reasoning": <reasoning_text>}}

Where <count> is a number between 0 and {len(requirements)}.

Requirements:
{requirements_text}"""


def preference_judge_prompt(original_prompt: str, requirements: list[str]) -> str:
    """The live variant's rubric text (``evaluate_with_human_preference_rubrics``)."""
    return f"""You are evaluating an SVG image from a human preference perspective.

Original Request: {original_prompt}

Evaluate the image across these 5 key rubrics that matter to humans:

**1. INTENT MATCHING (Weight: 30%)**
Does the content actually fulfill the intended purpose? Look beyond surface requirements.
- For logos: Are they actually recognizable as the intended brand/text, not just colored shapes?
- For UI: Does it look like a functional interface users would recognize?
- For objects: Would humans identify the main subject correctly?

**2. CONTENT RECOGNIZABILITY (Weight: 25%)**
Are the key elements genuinely recognizable, not abstract representations?
- Text/logos: Can you read the actual letters/words, or are they just shapes?
- Objects: Are they clearly identifiable with proper features?
- Brands/icons: Do they match what humans would expect to see?

**3. SPATIAL DESIGN QUALITY (Weight: 20%)**
Professional layout, visual hierarchy, and design principles:
- Visual hierarchy: Do important elements stand out appropriately?
- Layout balance: Is the composition well-balanced and professional?
- Spacing and alignment: Does it follow good design principles?
- Proportions: Are elements sized appropriately relative to each other?

**4. USER EXPERIENCE (Weight: 15%)**
Would humans find this usable and appropriate?
- Functionality: For UI elements, do they look clickable/interactive?
- Clarity: Is the purpose and function immediately clear?
- Accessibility: Is text readable, elements distinguishable?
- Professional appearance: Does it meet basic quality standards?

**5. VISUAL COHERENCE (Weight: 10%)**
Do all elements work together harmoniously?
- Style consistency: Do elements match in style and quality?
- Color harmony: Do colors work well together?
- Visual flow: Does the eye move through the design naturally?

**CRITICAL: Be very strict about content that looks like abstract shapes instead of the intended content.**
For example, colored circles arranged in Google colors should score very low for intent matching \
and recognizability.

Original Requirements (for context):
{chr(10).join([f"{i + 1}. {req}" for i, req in enumerate(requirements)])}

Respond with JSON in this exact format:
{{
    "intent_matching_score": <0.0-1.0>,
    "intent_reasoning": "<detailed explanation of how well content matches intended purpose>",
    "content_recognizability_score": <0.0-1.0>,
    "content_reasoning": "<detailed explanation of whether key elements are actually recognizable>",
    "spatial_design_score": <0.0-1.0>,
    "spatial_reasoning": "<detailed explanation of layout and design quality>",
    "user_experience_score": <0.0-1.0>,
    "ux_reasoning": "<detailed explanation of usability and appropriateness>",
    "visual_coherence_score": <0.0-1.0>,
    "coherence_reasoning": "<detailed explanation of visual harmony>",
    "overall_human_preference_score": <weighted average of above scores>,
    "overall_reasoning": "<summary of human preference evaluation>"
}}"""


def extract_svg_code(text: str) -> str | None:
    """The original's extraction: the first ```svg block, else the first ``<svg`` to the
    first ``</svg>``, else None."""
    if "```svg" in text:
        svg_parts = text.split("```svg")
        if len(svg_parts) > 1:
            return svg_parts[1].split("```")[0].strip()
    if "<svg" in text and "</svg>" in text:
        start = text.find("<svg")
        end = text.find("</svg>") + 6
        return text[start:end].strip()
    return None


def schema_format(name: str, schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


def schema_json(schema: dict) -> str:
    return json.dumps(schema)
