"""`memverbs ui`: a local brain inspector in the browser (docs/ui.md)."""
