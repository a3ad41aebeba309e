"""fusionviz: see torch.compile's kernel fusion, measured properly.

The capture side (`zoo`, `capture`, `worker`) needs torch; everything else (`session`, `trace`,
`analysis`, `charts`) opens recorded sessions without it. Nothing here imports streamlit.
"""

__version__ = "0.1.0"
