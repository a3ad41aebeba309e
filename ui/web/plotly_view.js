// One Plotly plot that stays mounted: each new figure redraws it in place (Plotly.react), and a click on a
// point (its customdata by field name) or a box drawn on it goes back to Python as a trigger value. plotly.js is
// read once per page, asked for by the page's head (ui/web/bundle.py); its module is kept as fusionvizPlotly,
// never the global Plotly, which whichever copy loads last sets. A figure may carry its presentation layout and
// config (data.present): the plot is drawn with the one of the page's mode (the class `fv-present` on the root,
// set by presentation.js) and redrawn when the mode changes, with no run of the server in between. ST: Streamlit's
// selectors (ui/web/selectors.py), put in front of this module.
const presenting = () => document.documentElement.classList.contains("fv-present");

// Whether the plot's figure is an animation (it has frames).
const animated = (plot) => !!(plot.fusionvizShown && plot.fusionvizShown.frames && plot.fusionvizShown.frames.length);

// Whether the plot shows other than its figure in a mode (the page's, by default): a figure that came while it was
// hidden, or the mode changed since it was drawn.
const stale = (plot, presented = presenting()) =>
  plot.fusionvizDrawn !== plot.fusionvizShown || presented !== plot.fusionvizPresenting;

function render(plot, presented = presenting()) {
  const Plotly = globalThis.fusionvizPlotly;
  const shown = plot.fusionvizShown;
  const on = presented && shown.present !== null;
  const base = on ? shown.present.layout : shown.layout;
  // As Streamlit's own charts on the same page: the title in bold at the left. The font is the figure's own
  // (charts/style.py): one the toolbar camera's PNG is drawn in too.
  const title = base.title || {};
  const layout = { ...base, autosize: true,
    title: title.text ? { x: 0, xanchor: "left", ...title, text: `<b>${title.text}</b>` } : title };
  plot.fusionvizPresenting = presented;
  plot.fusionvizDrawn = shown;
  Plotly.react(plot, { data: shown.data, layout, frames: shown.frames,
    config: { ...(on ? shown.present.config : shown.config), responsive: true } });
  plot.fusionvizWidth = plot.clientWidth;  // drawn at this width: a resize to it needs no second drawing
  if (!plot.fusionvizClicks) {  // Plotly's events exist once it has drawn
    plot.fusionvizClicks = true;
    // A clicked point goes back by name: its trace's meta.fields name its customdata (charts/customdata.py).
    plot.on("plotly_click", (event) => {
      const point = event && event.points && event.points[0];
      const fields = point && point.data && point.data.meta && point.data.meta.fields;
      if (Array.isArray(fields) && Array.isArray(point.customdata)) {
        plot.fusionvizSend("click", Object.fromEntries(fields.map((name, i) => [name, point.customdata[i]])));
      }
    });
    plot.on("plotly_selected", (event) => {
      if (event && event.range && event.range.x) plot.fusionvizSend("box", event.range.x);
    });
  }
}

// New figures are drawn one per task, the highest on the page first: the browser paints the first chart once it
// is drawn, not once every chart of the page is. One below the window waits for the page's idle time: drawn as
// they came, the charts below the fold held back the rest of the run's messages (benchmarks/RESULTS.md, "A worker
// that outlived its server, the naive loop's chart made once, charts below the window drawn when idle").
const queue = [];
let soon = false;  // a pump is queued as a task
function pump(idle = false) {
  if (!idle) soon = false;
  if (!queue.length) return;
  const tops = queue.map((plot) => plot.getBoundingClientRect().top);
  const at = tops.indexOf(Math.min(...tops));
  if (!idle && tops[at] >= window.innerHeight) {
    requestIdleCallback(() => pump(true), { timeout: 1000 });
    return;
  }
  const plot = queue.splice(at, 1)[0];
  if (plot.isConnected && plot.offsetParent && stale(plot)) render(plot);
  if (queue.length) pumpSoon();
  else requestIdleCallback(stageNext, { timeout: 2000 });
}
function pumpSoon() {
  if (soon) return;
  soon = true;
  setTimeout(pump, 0);
}

// The presentation's plots, hidden at the desk (and a view picker's views not on screen, a talk's neighbouring
// scenes too), are drawn ahead in the page's idle time, one per idle period, at the width and in the mode they are
// shown in, so that the toggle (or a click of the picker) shows them drawn: they and their hidden sections are laid
// out for that drawing off the screen, at the width the main block has once the sidebar has folded away.
const plots = new Set();
function stageNext() {
  if (queue.length) return;
  for (const plot of plots) if (!plot.isConnected) plots.delete(plot);
  // Not an animation: its slider and buttons make Plotly lay the margins out again after the drawing, by then
  // hidden again, and its title's subtitle (the source stamp) came out over the title.
  const waiting = [...plots].filter((plot) => !plot.offsetParent && plot.fusionvizShown && !animated(plot)
    && (plot.closest(ST.PRESENTED_ONLY) || (plot.fusionvizView && presenting())) && stale(plot, true));
  if (!waiting.length) return;
  stage(waiting[0]);
  if (waiting.length > 1) requestIdleCallback(stageNext, { timeout: 2000 });
}
function stage(plot) {
  const main = document.querySelector(ST.MAIN_BLOCK);
  const sidebar = document.querySelector(ST.SIDEBAR);
  if (!main) return;
  const box = getComputedStyle(main);
  const folds = sidebar && sidebar.getAttribute(ST.SIDEBAR_FOLDED) !== "true" ? sidebar.offsetWidth : 0;
  const width = main.clientWidth - parseFloat(box.paddingLeft) - parseFloat(box.paddingRight) + folds;
  const hidden = [];  // the plot and its ancestors that are hidden, outermost last
  for (let at = plot; at && at !== main; at = at.parentElement) {
    if (getComputedStyle(at).display === "none") hidden.push([at, at.getAttribute("style")]);
  }
  if (!hidden.length) return;
  for (const [at] of hidden) at.style.display = "block";
  Object.assign(hidden[hidden.length - 1][0].style,
    { position: "fixed", left: "-40000px", top: "0", width: `${width}px`, visibility: "hidden" });
  try {
    render(plot, true);
  } finally {
    for (const [at, style] of hidden) {
      if (style === null) at.removeAttribute("style");
      else at.setAttribute("style", style);
    }
  }
}
function schedule(plot) {
  if (queue.includes(plot)) return;
  queue.push(plot);
  pumpSoon();
}

// A view picker the plot follows in the browser (data.picker, ui/served_views.py). Each view it offers has a plot
// of its own in the element, one shown: the next views' figures are fetched at once and drawn hidden in the
// browser's idle time, and a click on an option shows that view's plot and caption at once (fetching and drawing
// it first if it was not ahead); the fragment's run that the click starts sends the same figure, which then
// redraws nothing. A figure that arrives after the picker moved on is drawn hidden, and a plot whose view the
// next run offers under another URL (another session, mode or size) is dropped. The caption of a view a run
// drew is the one on the page, kept when the picker first moves away from it.
const pickers = new Map();  // the picker's CSS class -> the element whose plots follow it
const fetched = new Map();  // a view's URL -> {figure (Plotly JSON), caption (HTML)}, a promise; the most recent last
const FETCHED = 32;
function keep(url, text) {
  fetched.set(url, text);
  if (fetched.size > FETCHED) fetched.delete(fetched.keys().next().value);
}
function fetchView(url) {
  if (!fetched.has(url)) {
    const text = fetch(new URL(url, document.baseURI)).then((r) => (r.ok ? r.json() : null)).catch(() => null);
    keep(url, text);
    text.then((t) => { if (t === null) fetched.delete(url); });
  }
  return fetched.get(url);
}
const viewPlots = (host) => [...host.querySelectorAll(":scope > .fusionviz-plot")];
// The element's plot for the view `label`, made (hidden) where there is none.
function viewPlot(host, label) {
  let plot = viewPlots(host).find((p) => p.fusionvizView === label);
  if (!plot) {
    plot = newPlot(host, host.fusionvizSend);
    plot.fusionvizView = label;
    plot.style.display = "none";
  }
  return plot;
}
// The view on its plot, as fetched from `url` ({figure, caption}).
function load(host, label, url, view) {
  const plot = viewPlot(host, label);
  if (plot.fusionvizUrl === url) return plot;
  plot.fusionvizUrl = url;
  plot.fusionvizCaption = view.caption;
  show(plot, view.figure, host.fusionvizPicker.views[label].config, null);
  return plot;
}
// The view's plot shown, the others hidden; with its caption, where the run has not drawn that (`caption`: a
// click's, where the caption on the page is the one of the plot on screen, kept first if it came with a run).
function reveal(host, label, caption = true) {
  const line = caption && document.querySelector(`[data-fv-caption="${host.fusionvizPicker.caption}"]`);
  let shown = null;
  for (const plot of viewPlots(host)) {
    if (line && plot.style.display !== "none" && !plot.fusionvizCaption) plot.fusionvizCaption = line.outerHTML;
    plot.style.display = plot.fusionvizView === label ? "" : "none";
    if (plot.fusionvizView === label) shown = plot;
  }
  if (line && shown && shown.fusionvizCaption) line.outerHTML = shown.fusionvizCaption;
}
// A click on an option, taken from the label clicked: Streamlit's radio checks its input from its own state, with
// no change event for it; or on a button of a picker of buttons, the view its text stands for.
function onPick(event) {
  const option = event.target instanceof Element && event.target.closest("label, button");
  if (!option) return;
  for (const [radio, host] of pickers) {
    if (!option.closest(`.${radio}`) || !host.isConnected) continue;
    const text = option.innerText.trim();
    const label = option.tagName === "BUTTON" ? host.fusionvizPicker.buttons[text] : text;
    if (label === undefined) return;
    host.fusionvizPicked = label;
    const view = host.fusionvizPicker.views[label];
    if (!view) return;
    const ready = viewPlots(host).find((p) => p.fusionvizView === label && p.fusionvizUrl === view.url);
    if (ready) {
      reveal(host, label);
      return;
    }
    fetchView(view.url).then((answer) => {
      if (answer === null || !host.isConnected) return;
      load(host, label, view.url, answer);
      if (host.fusionvizPicked === label) reveal(host, label);
    });
  }
}
// The run's view on its plot, shown; the plots of views no longer offered as they were, dropped; the next views
// fetched, and drawn hidden once the page is idle.
function follow(host, picker, data) {
  if (!pickers.size) document.addEventListener("click", onPick, true);
  host.fusionvizPicker = picker;
  host.fusionvizPicked = picker.shown;
  pickers.set(picker.radio, host);
  for (const plot of viewPlots(host)) {
    const view = picker.views[plot.fusionvizView];
    if (!view || view.url !== plot.fusionvizUrl) {
      // An animation (SVG: no WebGL context to free) may still be playing, and its next frame would find a purged
      // plot's state gone.
      if (!animated(plot)) globalThis.fusionvizPlotly.purge(plot);
      plot.remove();
    }
  }
  const url = picker.views[picker.shown].url;
  const shown = { figure: data.figure, caption: null };  // its caption: the run's, on the page
  keep(url, Promise.resolve(shown));
  load(host, picker.shown, url, shown);
  reveal(host, picker.shown, false);
  // Asked for at once (the server builds them once its runs have ended, ui/served_views.py), drawn when idle.
  for (const label of picker.ahead) {
    const ahead = picker.views[label];
    fetchView(ahead.url).then((answer) => {
      if (answer !== null && host.isConnected && host.fusionvizPicker === picker) load(host, label, ahead.url, answer);
    });
  }
}

// The figure (Plotly JSON) on the plot, drawn in its turn, unless the plot shows it already.
function show(plot, figureJson, config, present) {
  const sent = JSON.stringify([figureJson, config, present]);
  if (plot.fusionvizShown && plot.fusionvizShown.sent === sent) return;
  const figure = JSON.parse(figureJson);
  plot.fusionvizShown = { data: figure.data, layout: figure.layout, frames: figure.frames, config, sent,
    present: present ? { layout: JSON.parse(present.layout), config: present.config } : null };
  // A plot the page hides (the lab's presentation view at the desk, or its desk while presenting) is drawn
  // when it is shown, at the width it is shown at: drawn hidden, it took a first visit's time twice.
  schedule(plot);
}

// A new plot in `host`, drawn when shown (or staged), resized when its width changes, redrawn when the mode does.
function newPlot(host, send) {
  const plot = document.createElement("div");
  plot.className = "fusionviz-plot";
  plot.style.width = "100%";
  plot.fusionvizSend = send;
  host.appendChild(plot);
  plots.add(plot);
  // Shown, or its width changed without a window resize (the sidebar folds away in presentation mode): drawn at
  // once if it is stale, else resized once the width has settled, not on every frame of the sidebar's animation.
  let settle = 0;
  new ResizeObserver(() => {
    clearTimeout(settle);
    if (!plot.offsetParent) return;
    if (stale(plot)) {
      render(plot);
      return;
    }
    settle = setTimeout(() => {
      if (plot.offsetParent && plot.clientWidth !== plot.fusionvizWidth) {
        plot.fusionvizWidth = plot.clientWidth;
        globalThis.fusionvizPlotly.Plots.resize(plot);
      }
    }, 60);
  }).observe(plot);
  // The mode changed: redrawn in the frame the new style and width are laid out in.
  const modes = new MutationObserver(() => {
    if (!plot.isConnected) {
      modes.disconnect();
      return;
    }
    if (stale(plot)) {
      requestAnimationFrame(() => { if (plot.offsetParent && stale(plot)) render(plot); });
    }
  });
  modes.observe(document.documentElement, { attributes: true, attributeFilter: ["class"] });
  return plot;
}

export default function ({ data, parentElement, setTriggerValue }) {
  parentElement.fusionvizSend = setTriggerValue;
  for (const plot of viewPlots(parentElement)) plot.fusionvizSend = setTriggerValue;
  const draw = () => {
    if (!globalThis.fusionvizPlotly) {  // plotly.js is still being read
      setTimeout(draw, 10);
      return;
    }
    if (data.picker) {
      follow(parentElement, data.picker, data);
      return;
    }
    // A rerun that sends the same figure (the lab's top, when the rest of a first visit's page follows) keeps it.
    show(viewPlots(parentElement)[0] || newPlot(parentElement, setTriggerValue), data.figure, data.config,
      data.present);
  };
  draw();
}
