"""What a session means: speedups, verdicts, fusion links, tables and sentences.

Pure functions over a Session (DataFrames and plain values in and out), recomputed whenever a session
is opened, so a session built from a plain trace or a pair of files gets the same figures as a live run.
No torch, no plotly, no streamlit.
"""
