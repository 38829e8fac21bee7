"""The seven lanes of the reference design, each on the backbone with its own editorial pack (version 1)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PackText:
    voice: str
    audience: str
    avoid: tuple[str, ...]
    guidance: str


REFERENCE_LANES: dict[str, PackText] = {
    "news": PackText(
        "Plain, factual, inverted pyramid; the news in the first sentence.",
        "Readers who want what changed and why it matters, in two minutes.",
        ("speculation presented as fact", "superlatives", "unsourced numbers"),
        "Lead with the change, then the context, then what happens next. Cite every source named in the brief.",
    ),
    "dev": PackText(
        "Precise and practical; code before prose where code says it better.",
        "Working developers who will try it today.",
        ("marketing adjectives", "untested code", "version-less instructions"),
        "State the versions, show the minimal example, name the failure modes.",
    ),
    "build": PackText(
        "A build log: what we tried, what broke, what we kept.",
        "Engineers following how the product is made.",
        ("hindsight written as foresight", "blame"),
        "One decision per section, with the reason and the trade-off.",
    ),
    "design": PackText(
        "Visual, concrete, reasoned; every choice with its why.",
        "Designers and product people.",
        ("taste without reasons", "jargon without examples"),
        "Describe the problem, the options, the choice and how it was tested with people.",
    ),
    "marketing": PackText(
        "Warm and direct; benefits first, claims backed.",
        "Prospective customers comparing options.",
        ("unbacked claims", "competitor bashing", "fake urgency"),
        "One promise per piece, each claim linked to evidence in the sources.",
    ),
    "founders": PackText(
        "First person, candid, reflective.",
        "Other founders, investors and the team.",
        ("humblebrag", "vague lessons", "confidential numbers"),
        "Tell one story with its numbers where they can be shared, and the lesson it taught.",
    ),
    "business": PackText(
        "Analytical and sober; numbers with their source and period.",
        "Decision makers reading for the implications.",
        ("forecasts without assumptions", "buzzwords"),
        "Frame the question, give the figures, say what they imply and what they do not.",
    ),
}


# The research lane of the reference design: a second grounding round before generate (the pages the
# cited sources link to) and a fact-check after it. It differs from the backbone by two steps, so it
# is a lane of its own; it reaches a site through a package (or an operator's install).
RESEARCH_GRAPH: tuple[dict[str, str], ...] = (
    {"id": "validate", "step": "validate"},
    {"id": "ground", "step": "ground"},
    {"id": "ground_links", "step": "ground"},
    {"id": "generate", "step": "generate"},
    {"id": "fact_check", "step": "fact_check"},
    {"id": "clean", "step": "clean"},
    {"id": "persist", "step": "persist"},
    {"id": "index", "step": "index"},
    {"id": "cover", "step": "cover"},
    {"id": "publish", "step": "publish"},
)
RESEARCH_PACK = PackText(
    "Careful and sourced; every claim traceable to a cited page.",
    "Readers who check the sources.",
    ("claims without a source", "quotes out of context"),
    "Summarise what the sources establish, separate it from what they suggest, and cite each one.",
)

__all__ = ["REFERENCE_LANES", "RESEARCH_GRAPH", "RESEARCH_PACK", "PackText"]
