"""Code block colours from the theme's ``syntax*`` tokens (through the CSS variables).

Kept out of ``theming.py`` so that the first frame imports neither pygments nor
``textual.highlight`` (~7 ms): only the answers' markdown uses it.
"""

from __future__ import annotations

from pygments.token import Token
from textual.highlight import HighlightTheme


class ThemedHighlight(HighlightTheme):
    """Code block colours from the theme's ``syntax*`` tokens (through the CSS variables)."""

    STYLES = {
        Token.Comment: "$w-syntax-comment italic",
        Token.Keyword: "$w-syntax-keyword",
        Token.Keyword.Constant: "$w-syntax-keyword",
        Token.Keyword.Namespace: "$w-syntax-keyword",
        Token.Keyword.Type: "$w-syntax-type",
        Token.Name: "$w-syntax-variable",
        Token.Name.Builtin: "$w-syntax-type",
        Token.Name.Class: "$w-syntax-type",
        Token.Name.Decorator: "$w-syntax-function",
        Token.Name.Function: "$w-syntax-function",
        Token.Name.Function.Magic: "$w-syntax-function",
        Token.Name.Tag: "$w-syntax-keyword",
        Token.Name.Attribute: "$w-syntax-function",
        Token.Literal.String: "$w-syntax-string",
        Token.String: "$w-syntax-string",
        Token.Literal.Number: "$w-syntax-number",
        Token.Number: "$w-syntax-number",
        Token.Operator: "$w-syntax-operator",
        Token.Operator.Word: "$w-syntax-keyword",
        Token.Punctuation: "$w-syntax-punctuation",
        Token.Generic.Inserted: "$w-tool-diff-added",
        Token.Generic.Deleted: "$w-tool-diff-removed",
        Token.Generic.Heading: "$w-md-heading bold",
        Token.Generic.Strong: "bold",
        Token.Generic.Emph: "italic",
        Token.Error: "$w-error",
        Token.Whitespace: "",
    }
