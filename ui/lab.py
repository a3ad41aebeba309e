"""The fusion lab's sections: metrics, graph breaks, the collapse views, presentation and the full report."""

from __future__ import annotations

import streamlit as st

from fusionviz.analysis.sentences import load_warnings
from fusionviz.analysis.summary import comparisons, summary_table
from fusionviz.analysis.verdict import spread_words, verdict
from fusionviz.charts.collapse import collapse_animation, collapse_figure
from fusionviz.charts.latency import latency_figure, metrics_figure
from fusionviz.charts.style import ChartSettings
from fusionviz.records.session import Session
from ui import sections


def show_metrics(session: Session) -> None:
    eager = session.run("eager")
    compared = comparisons(session)
    cols = st.columns(max(len(session.runs) - 1, 1))
    compiled = [r for r in session.runs if r.mode != "eager"]
    for col, r in zip(cols, compiled, strict=False):
        vs = compared.get(r.mode)
        if not (vs and r.summary and eager and eager.summary):
            col.metric(r.mode, r.status.replace("_", " "))
            continue
        s = vs.speedup
        arrow = {"faster": "up", "slower": "down"}.get(vs.verdict, "off")
        col.metric(f"{r.mode} speedup", f"{s.median:.2f}×", delta=f"{vs.verdict} ({s.low:.2f}–{s.high:.2f}×)",
                   delta_arrow=arrow, delta_color="normal" if arrow != "off" else "off",  # type: ignore[arg-type]
                   help=f"median and p10–p90 of eager's time / {r.mode}'s in the same round, "
                        + spread_words(s))
        change = r.summary.kernels_per_iteration - eager.summary.kernels_per_iteration
        col.metric(f"{r.mode} kernels / iteration", f"{r.summary.kernels_per_iteration:g}",
                   delta=f"{change:+g} vs eager", delta_color="inverse" if change else "off")


def show_graph_breaks(session: Session) -> None:
    compiled = [r for r in session.runs if r.ok and r.mode != "eager"]
    broken = [r for r in compiled if (r.graph_count or 0) > 1 or r.graph_breaks]
    if not broken:
        st.markdown("No graph breaks: " + ", ".join(f"{r.mode} compiled the model as "
                                                    f"{r.graph_count or 1} graph" for r in compiled) + ".")
        return
    for r in broken:
        st.markdown(f"**{r.mode}** compiled **{r.graph_count} graphs** with **{len(r.graph_breaks)} break(s)**; "
                    "the code between them runs eagerly (the gaps between shaded regions on the timeline).")
        for i, brk in enumerate(r.graph_breaks, start=1):
            st.markdown(f"{i}. {brk.reason}")
            st.code(brk.user_frame, language="text")


def show_collapse(session: Session, settings: ChartSettings, *, animated: bool) -> None:
    eager = session.run("eager")
    compiled = sections.mode_picker(session, "Compiled mode", "animation_mode" if animated else "collapse_mode",
                              compiled_only=True)
    if eager is None or not eager.ok or compiled is None:
        st.info("The collapse view needs eager and a compiled mode that both ran.")
        return
    if animated:
        sections.chart(collapse_animation(eager, compiled, settings), "animation")
    else:
        sections.chart(collapse_figure(eager, compiled, settings), "collapse")


def present(session: Session, settings: ChartSettings) -> None:
    """Presentation mode: one chart per screen, chosen with big buttons."""
    view = st.radio("Show", ["Verdict", "Timeline", "Collapse", "Animation", "Latency"], horizontal=True,
                    key="present_view", label_visibility="collapsed")
    if view == "Verdict":
        st.markdown(f"## {verdict(session)}")
        sections.chart(metrics_figure(session, settings), "metrics")
    elif view == "Timeline":
        sections.show_timeline(session, settings, "timeline")
    elif view in ("Collapse", "Animation"):
        show_collapse(session, settings, animated=view == "Animation")
    else:
        sections.chart(latency_figure(session, settings), "latency")


def report(session: Session, settings: ChartSettings) -> None:
    """Every section of one session, top to bottom."""
    c = session.config
    st.markdown(f"**{c.model}** · dim {c.dim} · batch {c.batch}" + (f" · {c.seq}" if c.seq else "")
                + f" · {c.dtype} · {c.pass_} · dynamic={c.dynamic} · timed in {c.rounds} rounds × "
                + f"{c.processes} process{'es' if c.processes > 1 else ''}"
                + (f" · {c.threads} CPU thread{'s' if c.threads > 1 else ''}" if c.threads else ""))
    for note in load_warnings(session):
        st.warning(note)
    st.markdown(f"#### {verdict(session)}")
    sections.show_run_problems(session, not_applicable=False)  # the verdict names the modes that do not apply
    show_metrics(session)
    left, right = st.columns(2)
    with left:
        sections.chart(latency_figure(session, settings), "latency")
    with right:
        sections.chart(metrics_figure(session, settings), "metrics")
    with st.expander("All numbers per mode"):
        st.dataframe(summary_table(session), hide_index=True)
    st.subheader("Kernel timeline")
    sections.show_timeline(session, settings, "timeline")
    st.subheader("What fused into what")
    show_collapse(session, settings, animated=False)
    with st.expander("Animated: from eager to compiled (for talks)"):
        show_collapse(session, settings, animated=True)
    st.subheader("Graph breaks")
    show_graph_breaks(session)
    st.subheader("Kernels and generated code")
    sections.show_kernel_table(session, "kernels")
    st.subheader("Downloads")
    sections.show_downloads(session, "downloads")
