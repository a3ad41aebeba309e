"""Raw records: what a run was asked to do (config), what it produced (session), and what a profiler
trace holds (kernels, trace reader, files). Plain data and readers only: no torch, no plotly, no derived
figures (those are `fusionviz.analysis`, recomputed whenever a session is opened)."""
