"""Plotly figures, one module per figure family; each takes a Session (or analysis tables) and settings
and returns a `go.Figure`. Figure inputs (bars, node layouts) are pure functions beside their figure."""
