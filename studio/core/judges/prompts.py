"""Grader Studio's built-in judge prompts (Handlebars), used when a definition brings none.

Written for this project. Sections are wrapped in XML-like tags so a model (and the scripted fake
judge) can tell the conversation, the response and the reference apart.
"""

from __future__ import annotations

import json

BINARY_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "verdict": {"type": "string", "enum": ["PASS", "FAIL", "NA"]},
        },
        "required": ["reasoning", "verdict"],
    }
)

CRITERION_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "verdict": {"type": "string", "enum": ["MET", "UNMET"]},
        },
        "required": ["reasoning", "verdict"],
    }
)

RUBRIC_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {
            "score": {"type": "number", "minimum": 0, "maximum": 1},
            "rationale": {"type": "string"},
        },
        "required": ["score", "rationale"],
    }
)

CONVERSATION_BLOCK = """<conversation>
{{{context_str}}}
</conversation>

<response>
{{{completion}}}
</response>
{{#if metadata.expected}}

<reference>
{{{metadata.expected}}}
</reference>
{{/if}}"""

BINARY_SYSTEM = """You review answers written by an AI assistant. Judge the final response against one criterion.

Criterion:
{{{criteria}}}

Possible verdicts:
- PASS: the response satisfies the criterion.
- FAIL: the response does not satisfy the criterion.
- NA: the criterion does not apply to this conversation at all.

When a reference answer is given, treat it as the ground truth. Reason briefly, then reply with a JSON object that follows this schema:
{{{output_schema}}}"""

RANGE_SYSTEM = """You review answers written by an AI assistant and rate the final response on an integer scale from {{score_min}} to {{score_max}}.

Criteria:
{{{criteria}}}
{{#if subrange_text}}

What the scores mean:
{{{subrange_text}}}
{{/if}}

Evaluation steps:
{{{evaluation_steps_text}}}

Work through the evaluation steps and write down your reasoning. Do not state a score yet: you will be asked for it afterwards."""

RANGE_SCORE_QUESTION = (
    "Now give your score. Reply with SCORE: followed by a single integer from {low} to {high}, "
    "and nothing else."
)

STEPS_SYSTEM = "You design short, concrete procedures that graders follow to evaluate AI responses."

STEPS_USER = """Criteria:
{{{criteria}}}

Score range: {{score_min}} to {{score_max}}.

Write 3 or 4 concise evaluation steps a grader should follow to apply these criteria. Reply with a numbered list, one step per line, and nothing else."""

RUBRIC_SYSTEM = """You are an evaluator. Grade the submission using the rubric in the user message.
Reply with only a JSON object of the form {"score": <number from 0.0 to 1.0>, "rationale": "<why, in one to three sentences>"}."""

RUBRIC_SUBMISSION_SUFFIX = "\n\nSubmission to grade:\n{submission}"

CRITERION_SYSTEM = """You check one criterion against an answer written by an AI assistant.
{{#if negative}}
This criterion describes a MISTAKE. Reply MET if the mistake is present in the answer, UNMET if it is absent.
{{else}}
Reply MET if the answer satisfies the criterion, UNMET if it does not.
{{/if}}
Reason briefly, then reply with a JSON object that follows this schema:
{{{output_schema}}}"""

CRITERION_USER = """{{#if context_str_without_last_user}}<context>
{{{context_str_without_last_user}}}
</context>

{{/if}}<question>
{{{last_user_turn_content}}}
</question>

<answer>
{{{completion}}}
</answer>

<criterion>
{{{criterion}}}
</criterion>"""

CLAIMS_SYSTEM = """You break a text into atomic claims: short, self-contained factual statements that can each be checked on their own. Resolve pronouns using the question. Do not add anything the text does not say.
Reply with only a JSON array of strings."""

CLAIMS_USER = """<question>
{{{last_user_turn_content}}}
</question>

<text>
{{{completion}}}
</text>"""

FAITHFULNESS_SYSTEM = """You check whether a claim is supported by a context.
SUPPORTED: the context states the claim or directly implies it.
UNSUPPORTED: the context contradicts the claim or does not contain the information.
Reply with a JSON object: {"reasoning": "<one sentence>", "verdict": "SUPPORTED" or "UNSUPPORTED"}."""

FAITHFULNESS_USER = """<context>
{{{context}}}
</context>

<claim>
{{{claim}}}
</claim>"""

CONTEXT_RELEVANCY_SYSTEM = """You check whether a retrieved document is relevant to a question.
RELEVANT: the document contains information that helps answer the question.
IRRELEVANT: it does not.
Reply with a JSON object: {"reasoning": "<one sentence>", "verdict": "RELEVANT" or "IRRELEVANT"}."""

CONTEXT_RELEVANCY_USER = """<question>
{{{last_user_turn_content}}}
</question>

<document>
{{{document}}}
</document>"""

ANSWER_RELEVANCY_SYSTEM = """You check whether one statement from an answer addresses the question that was asked.
RELEVANT: the statement helps answer the question.
IRRELEVANT: the statement is off-topic or adds information the user did not ask for.
Reply with a JSON object: {"reasoning": "<one sentence>", "verdict": "RELEVANT" or "IRRELEVANT"}."""

ANSWER_RELEVANCY_USER = """<question>
{{{last_user_turn_content}}}
</question>

<statement>
{{{statement}}}
</statement>"""
