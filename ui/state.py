"""The app's state in one place: the run service of this app process with the store of finished runs it shares
with every browser session (a configuration that already ran answers at once), and named accessors for every
key of a user's own `st.session_state`: what is on screen, the presentation mode, the runs they wait for and
their own runs that failed in part, and the widgets whose values are set or read outside their widget call.

Only complete results, the same for everyone, are shared (`fusionviz.measure.service`): a run that failed in
part is kept for its user alone, and the next request runs again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import streamlit as st

from fusionviz.lru import LRU
from fusionviz.measure.service import RunService, Ticket

Page = Literal["lab", "methodology", "sweep"]
RESULTS_KEPT = 32  # finished runs kept across all browser sessions; the oldest goes first
OWN_KEPT = 4  # a user's own incomplete runs kept for them alone; the oldest goes first

# Keys of widgets whose values are also set or read here.
LAB_SOURCE = "lab_source"  # the lab's "Show" picker
LAB_CELL = "lab_cell"  # the lab's picker of a crossover grid's cell
SWEEP_SOURCE = "s_source"  # the Dynamic shapes page's "Sweep shown" picker
SCENE_LIST = "story_pick"  # the story's list of scenes


# The whole app process ---------------------------------------------------------------------------------------

@cache
def runs() -> RunService:
    """One run service for the whole app process: one line and one worker process per device, so runs on one
    device never overlap, a CPU run never waits for a GPU run, and identical requests in flight share one run.
    Kept outside Streamlit's caches: its "Clear caches" empties every `st.cache_resource`, and a second service
    would start a second worker per device whose runs overlap those of the first, skewing both measurements."""
    return RunService(results)


@st.cache_resource(show_spinner=False)
def results() -> LRU[str, Any]:
    """Complete results by `Run.key`, shared by every browser session of this app process (emptied by "Clear
    caches", which the service follows: it asks for the store when a run ends)."""
    return LRU(RESULTS_KEPT)


# What a user sees, and the runs they wait for ----------------------------------------------------------------

def _own() -> LRU[str, Any]:
    """This user's own incomplete results, by `Run.key`."""
    own: LRU[str, Any] = st.session_state.setdefault("own_results", LRU(OWN_KEPT))
    return own


def keep_own(key: str, value: Any) -> None:
    """Keep an incomplete result for this user alone (never in the shared store)."""
    _own().put(key, value)


def forget_own(key: str) -> None:
    """Drop this user's incomplete result of `key` (a complete one is shared now)."""
    _own().pop(key)


def result(key: str | None) -> Any:
    """The result of `key` this user may see: the shared one, else their own incomplete run; None if neither."""
    if key is None:
        return None
    shared = runs().shared(key)
    return shared if shared is not None else _own().get(key)


def shown(page: Page) -> str | None:
    """The result key of what this user's page shows, if a run of theirs is on screen."""
    key = st.session_state.get(f"shown_{page}")
    return str(key) if key is not None else None


def show(page: Page, key: str, took: str) -> None:
    """Put a finished result on this user's page, with how it was obtained ("measured in 3.1 s")."""
    st.session_state[f"shown_{page}"] = key
    st.session_state[f"took_{page}"] = took


def took(page: Page) -> str:
    return str(st.session_state.get(f"took_{page}", ""))


@dataclass(frozen=True)
class Pending:
    """A run this user waits for, and what its status box says."""

    ticket: Ticket[Any]
    label: str
    failed: str


def pending(slot: str) -> Pending | None:
    """The run this user waits for in `slot` (a page, or a part of one), if any."""
    waiting: Pending | None = st.session_state.get(f"pending_{slot}")
    return waiting


def wait_for(slot: str, run: Pending) -> None:
    st.session_state[f"pending_{slot}"] = run


def let_go(slot: str) -> Pending | None:
    """Stop waiting in `slot`; the run waited for, if any (its ticket is the caller's to cancel)."""
    waiting: Pending | None = st.session_state.pop(f"pending_{slot}", None)
    return waiting


# The presentation mode ---------------------------------------------------------------------------------------

def presentation() -> bool:
    """Whether this page presents: the user's toggle is on, or the page always presents (a talk)."""
    return bool(st.session_state.get("presentation", False) or st.session_state.get("page_presents", False))


def set_page_presents(on: bool) -> None:
    """Mark the page being drawn as one that always presents, or not; every page sets it at its start."""
    st.session_state["page_presents"] = on


def presentation_toggle(title: str) -> str:
    """The key of the presentation toggle of the page `title`, set to the mode: the mode is kept across pages,
    and each page's toggle shows it."""
    key = f"_pres_{title}"
    st.session_state[key] = presentation()
    return key


def toggled(key: str) -> None:
    """The presentation toggle's callback: its new value becomes the mode."""
    st.session_state["presentation"] = bool(st.session_state[key])


# A page's first run in a browser ------------------------------------------------------------------------------

def painted(page: Page) -> bool:
    """Whether the browser has said that it painted the top of `page` (ui/page.py)."""
    return bool(st.session_state.get(f"painted_{page}", False))


def set_painted(page: Page) -> None:
    st.session_state[f"painted_{page}"] = True
    st.session_state.pop("rest_pending", None)


def leave_rest(page: Page) -> None:
    """This run drew the top of `page` only; the next draws the rest, once the browser has painted the top."""
    st.session_state["rest_pending"] = page


def rest_pending() -> bool:
    """Whether a page's top is on screen without its rest, which the browser has yet to ask for."""
    return "rest_pending" in st.session_state


# The lab's sidebar -------------------------------------------------------------------------------------------

def lab_source() -> str | None:
    return st.session_state.get(LAB_SOURCE)


def set_lab_source(source: str) -> None:
    st.session_state[LAB_SOURCE] = source


def model_key(setting: str, model: str) -> str:
    """The key of the lab's widget for a size `setting` that each model keeps its own ("seq", and a real
    model's "dim" and "layers": GPT-2's 768 wide, 12 blocks is no size for the zoo's MLP)."""
    return f"{setting}_{model}"


def default_widgets(values: Mapping[str, object]) -> None:
    """Give the widgets of these keys a value where they have none yet: through the session rather than each
    widget's default, since `set_widgets` sets them too (a widget given both is warned about)."""
    for key, value in values.items():
        st.session_state.setdefault(key, value)


def set_widgets(values: Mapping[str, object]) -> None:
    """Set the widgets of these keys before they are drawn."""
    for key, value in values.items():
        st.session_state[key] = value


def first_prefill(identity: str) -> bool:
    """Whether the lab's widgets are to be set to the session `identity` now: once per session shown, so the
    user's edits stay."""
    if st.session_state.get("lab_prefilled") == identity:
        return False
    st.session_state["lab_prefilled"] = identity
    return True


def ask_lab_run() -> None:
    """Press the lab's Run on the next run of the page (a proposal's "Re-run with", `on_screen.rerun_with`)."""
    st.session_state["lab_run_asked"] = True


def take_lab_run() -> bool:
    """Whether a lab run was asked for since the measuring widgets were last drawn (`ask_lab_run`); once."""
    return bool(st.session_state.pop("lab_run_asked", False))


def lab_cell() -> Any:
    """The crossover grid's cell picked, (dim, batch), if any."""
    return st.session_state.get(LAB_CELL)


def set_lab_cell(cell: tuple[int, int]) -> None:
    st.session_state[LAB_CELL] = cell


def selected_points(chart: str) -> list[dict[str, Any]]:
    """The points selected on the selectable chart of key `chart` (its callback reads them)."""
    points: list[dict[str, Any]] = st.session_state[chart]["selection"]["points"]
    return points


# The Dynamic shapes page -------------------------------------------------------------------------------------

def sweep_source() -> str | None:
    return st.session_state.get(SWEEP_SOURCE)


def set_sweep_source(source: str) -> None:
    st.session_state[SWEEP_SOURCE] = source


def follow_next_run(page: Page, identity: str, values: Mapping[str, object]) -> bool:
    """Ask for the widgets of these keys to be set to `values` at the start of the next run (`follow_shown`),
    once per `identity` put on `page`, so the user's edits stay: for a page whose widgets are drawn before it
    knows what it shows. True when asked for (the caller reruns); False when already done or nothing changes."""
    if st.session_state.get(f"followed_{page}") == identity:
        return False
    st.session_state[f"followed_{page}"] = identity
    changed = {key: value for key, value in values.items() if st.session_state.get(key) != value}
    if changed:
        st.session_state[f"follow_{page}"] = changed
    return bool(changed)


def follow_shown(page: Page) -> None:
    """Set the widgets asked for by `follow_next_run`, before they are drawn."""
    set_widgets(st.session_state.pop(f"follow_{page}", {}))


# The story's scene -------------------------------------------------------------------------------------------

def scene() -> int:
    """The index of the talk's scene on screen (0 at first)."""
    return int(st.session_state.get("story_index", 0))


def go_to_scene(at: int) -> None:
    """Put scene `at` on screen, marked in the scene list."""
    st.session_state["story_index"] = at
    st.session_state[SCENE_LIST] = at


def scene_within(scenes: int) -> int:
    """The scene on screen, kept within a talk of `scenes` scenes (a shorter talk may have replaced a longer
    one), and the scene list's mark with it."""
    at = min(scene(), scenes - 1)
    st.session_state["story_index"] = at
    if st.session_state.get(SCENE_LIST, 0) >= scenes:
        st.session_state[SCENE_LIST] = at
    return at


def mark_scene_in_list() -> None:
    """The scene list marks the scene on screen when it has no mark of its own yet."""
    st.session_state.setdefault(SCENE_LIST, scene())


def scene_picked() -> None:
    """The scene list's callback: the scene picked goes on screen."""
    st.session_state["story_index"] = st.session_state[SCENE_LIST]


# What is chosen in one session -------------------------------------------------------------------------------

def of_session(widget: str, session: str) -> str:
    """The key of a widget whose choice belongs to the session on screen (a kernel row picked in a table, a
    kernel clicked on a timeline), made of the session's identity (its report key): another session or a live
    run gets a widget of its own with nothing chosen, where one key kept the last session's pick and showed a
    kernel the user never picked there."""
    return f"{widget}@{session}"


# A kernel timeline (by its section's key) --------------------------------------------------------------------

def timeline_step_key(timeline: str) -> str:
    """The key of a timeline's iteration picker."""
    return f"{timeline}_step"


def timeline_plot_key(timeline: str, session: str) -> str:
    """The key of a timeline's kept plot of the session whose report key is `session` (see `of_session`)."""
    return of_session(f"{timeline}_plot", session)


def timeline_shows(timeline: str, shown: object) -> None:
    """Note which session a timeline draws: on another one, its iteration picker starts afresh (at that
    session's own median iteration, not the last pick)."""
    if st.session_state.get(f"{timeline}_shown") != shown:
        st.session_state[f"{timeline}_shown"] = shown
        st.session_state.pop(timeline_step_key(timeline), None)


def timeline_window(timeline: str, choice: object) -> tuple[float, float] | None:
    """The window (µs) a timeline is zoomed into, None for the whole; another `choice` of iterations starts
    from the whole of it."""
    if st.session_state.get(f"{timeline}_choice") != choice:
        st.session_state[f"{timeline}_choice"] = choice
        st.session_state[f"{timeline}_window"] = None
    window: tuple[float, float] | None = st.session_state.get(f"{timeline}_window")
    return window


def set_timeline_window(timeline: str, window: tuple[float, float] | None) -> None:
    st.session_state[f"{timeline}_window"] = window


# A file picker's uploader (by the picker's key) ---------------------------------------------------------------

def uploader_key(picker: str) -> str:
    """The key of a picker's file uploader: a new key after each refused file, so that the refused file's chip
    leaves the uploader (Streamlit offers no other way to empty one)."""
    refusals = int(st.session_state.get(f"{picker}_refusals", 0))
    return f"{picker}_file" if not refusals else f"{picker}_file_{refusals}"


def refuse_upload(picker: str, message: str) -> None:
    """An uploaded file was refused: the next run shows an empty uploader under `message`."""
    st.session_state[f"{picker}_refusals"] = int(st.session_state.get(f"{picker}_refusals", 0)) + 1
    st.session_state[f"{picker}_refused"] = message


def refusal(picker: str) -> str | None:
    """Why the picker's last uploaded file was refused, until a file opens."""
    message = st.session_state.get(f"{picker}_refused")
    return str(message) if message is not None else None


def opened_file(picker: str) -> None:
    """A file opened in the picker: its last refusal is no longer news."""
    st.session_state.pop(f"{picker}_refused", None)
