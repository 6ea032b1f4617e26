"""The OpenAPI 3.1 document served at ``GET /v1/openapi.json``."""

from __future__ import annotations

from svgloo.engine.version import __version__

_ERROR = {
    "type": "object",
    "properties": {"error": {
        "type": "object",
        "required": ["kind", "message"],
        "properties": {
            "kind": {"type": "string", "description":
                     "input | limit | render | config | superseded | disconnected | shutdown "
                     "| request | forbidden | unauthorized | not_implemented | internal"},
            "file": {"type": ["string", "null"]},
            "message": {"type": "string"},
            "line": {"type": ["integer", "null"], "description": "0-based"},
            "column": {"type": ["integer", "null"], "description": "0-based"},
        }}},
}

_ANALYSE_REQUEST = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "document text (an editor buffer)"},
        "path": {"type": "string", "description": "absolute path, read by the daemon when "
                                                  "no text is given"},
        "uri": {"type": "string", "description": "document identity for superseding "
                                                 "(e.g. file:///…/a.svg)"},
        "version": {"type": ["integer", "null"], "description":
                    "document version; a newer version of the same uri cancels older "
                    "unfinished requests"},
        "settings": {"type": "object", "description":
                     "ScoreSettings (or StructureSettings) field names: backbone, method, "
                     "size, subpaths, reference, prompt, helpful_threshold, "
                     "harmful_threshold, weights, device, prove (default true: the "
                     "removal proof; false answers with the leave-one-out alone, and the "
                     "same text scored again with prove true proves the kept run)"},
        "priority": {"type": "string", "enum": ["interactive", "batch"],
                     "default": "interactive"},
    },
}


def _resp(desc: str, schema: dict | None = None, ctype: str = "application/json") -> dict:
    return {"description": desc, "content": {ctype: {"schema": schema or {"type": "object"}}}}


def _errors(*codes: int) -> dict:
    names = {400: "malformed request", 401: "missing/wrong bearer token (TCP)",
             403: "bad Host header (TCP)", 409: "superseded by a newer version, or cancelled",
             413: "request too large", 422: "the document or settings were rejected "
                                            "(SvglooError JSON)",
             501: "not part of this build", 503: "the daemon is shutting down"}
    return {str(c): _resp(names[c], {"$ref": "#/components/schemas/Error"}) for c in codes}


def openapi_document() -> dict:
    analyse = {"requestBody": {"required": True, "content": {"application/json": {
        "schema": {"$ref": "#/components/schemas/AnalyseRequest"}}}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "svgloo daemon", "version": __version__,
                 "description": "Leave-one-out scoring of SVG files with warm models. "
                                "Served over a Unix socket (and optionally 127.0.0.1 TCP "
                                "with a bearer token)."},
        "servers": [{"url": "/"}],
        "components": {
            "schemas": {"Error": _ERROR, "AnalyseRequest": _ANALYSE_REQUEST},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                           "description": "TCP only; the token is in the "
                                                          "file <socket>.token"}},
        },
        "paths": {
            "/v1/score": {"post": {
                "summary": "Score every unit of a document (svgloo.score/1 + a 'daemon' "
                           "block: cached, queue_s, elapsed_s)",
                **analyse,
                "responses": {"200": _resp("svgloo.score/1 result"),
                              **_errors(400, 409, 413, 422, 503)}}},
            "/v1/structure": {"post": {
                "summary": "Structure analysis (svgloo.structure/1)", **analyse,
                "responses": {"200": _resp("svgloo.structure/1 result"),
                              **_errors(400, 409, 413, 422, 501, 503)}}},
            "/v1/status": {"get": {
                "summary": "pid, address, models loaded and device, uptime, queue length, "
                           "jobs (completed, failed, cancelled, interrupted, preempted, "
                           "merged), cache hits/misses/rejected entries/write error, "
                           "watched folders, limits",
                "responses": {"200": _resp("status")}}},
            "/v1/watch": {"post": {
                "summary": "Re-score the SVG files of a folder when they are saved; results "
                           "are pushed on /v1/events",
                "requestBody": {"content": {"application/json": {"schema": {
                    "type": "object", "required": ["folder"],
                    "properties": {"folder": {"type": "string"},
                                   "settings": {"type": "object"}}}}}},
                "responses": {"200": _resp("watching"), **_errors(400, 422)}}},
            "/v1/unwatch": {"post": {
                "summary": "Stop watching a folder",
                "requestBody": {"content": {"application/json": {"schema": {
                    "type": "object", "required": ["folder"],
                    "properties": {"folder": {"type": "string"}}}}}},
                "responses": {"200": _resp("stopped"), **_errors(400)}}},
            "/v1/close": {"post": {
                "summary": "The editor closed a document: its analysis, queued or running, "
                           "is stopped (its waiting request answers 409 'closed') and what "
                           "was kept to re-score it after an edit is dropped",
                "requestBody": {"content": {"application/json": {"schema": {
                    "type": "object", "required": ["uri"],
                    "properties": {"uri": {"type": "string"}}}}}},
                "responses": {"200": _resp("stopped"), **_errors(400)}}},
            "/v1/events": {"get": {
                "summary": "Server-sent events: 'result' {path, result}, 'error' {path, "
                           "error}, 'deleted' {path}, 'shutdown'",
                "responses": {"200": _resp("event stream", {"type": "string"},
                                           "text/event-stream")}}},
            "/v1/shutdown": {"post": {"summary": "Stop the daemon",
                                      "responses": {"200": _resp("stopping")}}},
            "/v1/openapi.json": {"get": {"summary": "This document",
                                         "responses": {"200": _resp("OpenAPI 3.1")}}},
        },
        "security": [{}, {"bearer": []}],
    }
