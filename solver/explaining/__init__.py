"""Explanations: the rule in English, each image's `why` from the rule's own evidence, the report page and JSON
of a solved problem (`page`: the scaffolding both LOGO problems and problems given as facts build on) and the index
of a folder of reports.

May import: dsl, search, solver.induction, solver.settings.
"""

from solver import face

FACE = {
    "Alternative": "explanation", "Explanation": "explanation", "ImageEvidence": "explanation",
    "covered": "explanation", "explain": "explanation", "explain_rules": "explanation",
    "image_evidence": "explanation", "no_rule": "explanation", "write_index": "index_page",
    "alternatives_html": "page", "decided_html": "page", "explanation_page": "page", "legend_html": "page",
    "page_html": "page", "page_paths": "page", "queries_html": "page", "rule_html": "page", "verdict_html": "page",
    "why_html": "page", "write_page": "page", "ReportImage": "report", "write_report": "report",
    "DIFFERENCE_HEX": "report_picture", "PROGRAM_HEX": "report_picture", "Failing": "why", "Part": "why",
    "Why": "why", "rule_why": "why", "rule_shapes": "why_sequence",
}
__all__ = sorted(FACE)
__getattr__ = face(__name__, FACE)
