"""``svgloo vscode-extension``: write the VS Code extension as an installable ``.vsix``,
with nothing but Python.

The extension's TypeScript (packaging/vscode/) is bundled with esbuild into one JavaScript
file, and that file ships inside this package (``vscode_extension/``, refreshed by
``packaging/vscode/ship-to-python.sh``; tests/packaging/test_vscode_vsix.py checks that it is
what the TypeScript compiles to). Here it is zipped the way ``vsce package`` zips it: an
``extension.vsixmanifest`` and ``[Content_Types].xml`` at the top, the extension's files
under ``extension/``. So a user with only Python gets the same extension that Node users
build, and installs it with ``code --install-extension svgloo.vsix``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

SHIPPED = Path(__file__).resolve().parent / "vscode_extension"
BUNDLE = "extension.js"  # the esbuild bundle; its place in the .vsix is package.json's main

# Files of the extension besides the bundle: shipped name -> name inside the .vsix (vsce
# renames LICENSE to LICENSE.txt and README.md to readme.md, and so do we).
FILES = {
    "package.json": "extension/package.json",
    "language-configuration.json": "extension/language-configuration.json",
    "syntaxes/svg.tmLanguage.json": "extension/syntaxes/svg.tmLanguage.json",
    "LICENSE": "extension/LICENSE.txt",
    "README.md": "extension/readme.md",
}

CONTENT_TYPES = {".js": "application/javascript", ".json": "application/json",
                 ".md": "text/markdown", ".txt": "text/plain", ".vsixmanifest": "text/xml"}

# A fixed timestamp: the same extension zips to the same bytes (zip cannot go before 1980).
STAMP = (1980, 1, 1, 0, 0, 0)


def bundle_entry(manifest: dict) -> str:
    """Where package.json's ``main`` puts the bundle inside the .vsix."""
    main = str(manifest["main"]).removeprefix("./")
    if not main.endswith(".js"):
        main += ".js"
    return f"extension/{main}"


def vsix_manifest(manifest: dict) -> str:
    """The ``extension.vsixmanifest`` that vsce writes for this package.json (the fields
    VS Code reads when installing: identity, engine, kind, license and the assets)."""
    tags = list(manifest.get("keywords", []))
    for language in manifest.get("contributes", {}).get("languages", []):
        tags += [a for a in language.get("aliases", []) if a not in tags]
        tags += [f"__ext_{e.lstrip('.')}" for e in language.get("extensions", [])]
    properties = {
        "Microsoft.VisualStudio.Code.Engine": manifest["engines"]["vscode"],
        "Microsoft.VisualStudio.Code.ExtensionDependencies":
            ",".join(manifest.get("extensionDependencies", [])),
        "Microsoft.VisualStudio.Code.ExtensionPack": ",".join(manifest.get("extensionPack", [])),
        "Microsoft.VisualStudio.Code.ExtensionKind": "workspace",
        "Microsoft.VisualStudio.Code.LocalizedLanguages": "",
        "Microsoft.VisualStudio.Code.EnabledApiProposals": "",
        "Microsoft.VisualStudio.Code.ExecutesCode": "true",
        "Microsoft.VisualStudio.Services.GitHubFlavoredMarkdown": "true",
        "Microsoft.VisualStudio.Services.Content.Pricing": "Free",
    }
    props = "\n".join(f"      <Property Id={quoteattr(k)} Value={quoteattr(v)} />"
                      for k, v in properties.items())
    return f"""<?xml version="1.0" encoding="utf-8"?>
<PackageManifest Version="2.0.0" xmlns="http://schemas.microsoft.com/developer/vsx-schema/2011" xmlns:d="http://schemas.microsoft.com/developer/vsx-schema-design/2011">
  <Metadata>
    <Identity Language="en-US" Id={quoteattr(manifest["name"])} Version={quoteattr(manifest["version"])} Publisher={quoteattr(manifest["publisher"])} />
    <DisplayName>{escape(manifest.get("displayName", manifest["name"]))}</DisplayName>
    <Description xml:space="preserve">{escape(manifest.get("description", ""))}</Description>
    <Tags>{escape(",".join(tags))}</Tags>
    <Categories>{escape(",".join(manifest.get("categories", [])))}</Categories>
    <GalleryFlags>Public</GalleryFlags>
    <Properties>
{props}
    </Properties>
    <License>extension/LICENSE.txt</License>
  </Metadata>
  <Installation>
    <InstallationTarget Id="Microsoft.VisualStudio.Code"/>
  </Installation>
  <Dependencies/>
  <Assets>
    <Asset Type="Microsoft.VisualStudio.Code.Manifest" Path="extension/package.json" Addressable="true" />
    <Asset Type="Microsoft.VisualStudio.Services.Content.Details" Path="extension/readme.md" Addressable="true" />
    <Asset Type="Microsoft.VisualStudio.Services.Content.License" Path="extension/LICENSE.txt" Addressable="true" />
  </Assets>
</PackageManifest>
"""


def content_types(names: list[str]) -> str:
    """``[Content_Types].xml``: one Default per file extension in the package (OPC)."""
    exts = sorted({os.path.splitext(n)[1] for n in names} | {".vsixmanifest"})
    defaults = "".join(f"<Default Extension={quoteattr(e)} "
                       f"ContentType={quoteattr(CONTENT_TYPES.get(e, 'application/octet-stream'))}/>"
                       for e in exts)
    return ('<?xml version="1.0" encoding="utf-8"?>\n<Types xmlns='
            f'"http://schemas.openxmlformats.org/package/2006/content-types">{defaults}</Types>\n')


def vsix_entries(source: Path = SHIPPED) -> dict[str, bytes]:
    """Every entry of the .vsix, name -> bytes, in the order vsce writes them."""
    manifest = json.loads((source / "package.json").read_text(encoding="utf-8"))
    files = {inside: (source / shipped).read_bytes() for shipped, inside in FILES.items()}
    files[bundle_entry(manifest)] = (source / BUNDLE).read_bytes()
    return {"extension.vsixmanifest": vsix_manifest(manifest).encode("utf-8"),
            "[Content_Types].xml": content_types(list(files)).encode("utf-8"), **files}


def write_vsix(output: Path, source: Path = SHIPPED) -> Path:
    """Zip the extension into ``output``, atomically (a half-written .vsix never sits at
    the name VS Code is pointed at)."""
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{output.name}.", dir=output.parent)
    try:
        with os.fdopen(fd, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in vsix_entries(source).items():
                info = zipfile.ZipInfo(name, STAMP)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                z.writestr(info, data)
        os.replace(tmp, output)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return output


def run(args: argparse.Namespace) -> int:
    if not (SHIPPED / BUNDLE).is_file():
        print(f"svgloo: error: {SHIPPED / BUNDLE}: the extension's JavaScript is missing from "
              "this install of svgloo", file=sys.stderr)
        return 2
    try:
        path = write_vsix(Path(args.output))
    except OSError as exc:
        print(f"svgloo: error: {args.output}: cannot write: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    print(f"wrote {path}; install it with: code --install-extension {path}")
    return 0


def register(sub) -> None:
    p = sub.add_parser(
        "vscode-extension", help="write the VS Code extension (.vsix) to install with code",
        description="Write svgloo's VS Code extension as a .vsix file, with no Node.js "
                    "needed, then install it with `code --install-extension svgloo.vsix`. "
                    "The extension starts `svgloo lsp` with the Python interpreter selected "
                    "in VS Code, else the svgloo on PATH.")
    p.add_argument("--output", "-o", default="svgloo.vsix", metavar="FILE",
                   help="where to write it (default ./svgloo.vsix)")
    p.set_defaults(func=run)
