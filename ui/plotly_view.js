// One Plotly plot that stays mounted: each new figure redraws it in place (Plotly.react), and a click on a
// point (its customdata by field name) or a box drawn on it goes back to Python as a trigger value. plotly.js (its module as fusionvizPlotly,
// never the global Plotly, which whichever copy loads last sets) is read once per page: from data.plotly_url
// (the app's static files, cached by the browser) or, where the app could not write that file, from the
// fusionviz.plotly_js element mounted beside this one. A figure may carry its presentation layout and config
// (data.present): the plot is drawn with the one of the page's mode (the class `fv-present` on the root, set by
// ui/presentation.js) and redrawn when the mode changes, with no run of the server in between.
const presenting = () => document.documentElement.classList.contains("fv-present");

function render(Plotly, plot) {
  const shown = plot.fusionvizShown;
  const on = presenting() && shown.present !== null;
  const base = on ? shown.present.layout : shown.layout;
  // As Streamlit's own charts on the same page: the title in bold at the left. The font is the figure's own
  // (charts/style.py): one the toolbar camera's PNG is drawn in too.
  const title = base.title || {};
  const layout = { ...base, autosize: true,
    title: title.text ? { x: 0, xanchor: "left", ...title, text: `<b>${title.text}</b>` } : title };
  plot.fusionvizPresenting = presenting();
  Plotly.react(plot, shown.data, layout, { ...(on ? shown.present.config : shown.config), responsive: true });
  plot.fusionvizWidth = plot.clientWidth;  // drawn at this width: a resize to it needs no second drawing
}

export default function ({ data, parentElement, setTriggerValue }) {
  if (data.plotly_url && !globalThis.fusionvizPlotly) {  // requested once, by ui/presentation.js as a rule
    const src = new URL(data.plotly_url, document.baseURI).href;
    if (!document.querySelector(`script[src="${src}"]`)) {
      const script = document.createElement("script");
      script.src = src;
      document.head.appendChild(script);
    }
  }
  let plot = parentElement.querySelector(".fusionviz-plot");
  if (!plot) {
    plot = document.createElement("div");
    plot.className = "fusionviz-plot";
    plot.style.width = "100%";
    parentElement.appendChild(plot);
  }
  const draw = () => {
    const Plotly = globalThis.fusionvizPlotly;
    if (!Plotly) {  // plotly.js is still being read
      setTimeout(draw, 10);
      return;
    }
    const figure = JSON.parse(data.figure);
    plot.fusionvizShown = { data: figure.data, layout: figure.layout, config: data.config,
      present: data.present ? { layout: JSON.parse(data.present.layout), config: data.present.config } : null };
    render(Plotly, plot);
    if (!plot.fusionvizEvents) {
      plot.fusionvizEvents = true;
      // The page's width changes without a window resize too (the sidebar folds away in presentation mode):
      // redrawn once the width has settled, not on every frame of the sidebar's animation. A plot in a section
      // the mode hides (the lab's desk while presenting) is left as it is until it is shown again, and drawn
      // then for the mode it missed.
      let settle = 0;
      new ResizeObserver(() => {
        clearTimeout(settle);
        settle = setTimeout(() => {
          if (!plot.offsetParent) return;
          if (presenting() !== plot.fusionvizPresenting) {
            render(Plotly, plot);
          } else if (plot.clientWidth !== plot.fusionvizWidth) {
            plot.fusionvizWidth = plot.clientWidth;
            Plotly.Plots.resize(plot);
          }
        }, 60);
      }).observe(plot);
      // The mode changed: redrawn in the frame the new style and width are laid out in.
      const modes = new MutationObserver(() => {
        if (!plot.isConnected) {
          modes.disconnect();
          return;
        }
        if (presenting() !== plot.fusionvizPresenting) {
          requestAnimationFrame(() => { if (plot.offsetParent) render(Plotly, plot); });
        }
      });
      modes.observe(document.documentElement, { attributes: true, attributeFilter: ["class"] });
      // A clicked point goes back by name: its trace's meta.fields name its customdata (charts/customdata.py).
      plot.on("plotly_click", (event) => {
        const point = event && event.points && event.points[0];
        const fields = point && point.data && point.data.meta && point.data.meta.fields;
        if (Array.isArray(fields) && Array.isArray(point.customdata)) {
          setTriggerValue("click", Object.fromEntries(fields.map((name, i) => [name, point.customdata[i]])));
        }
      });
      plot.on("plotly_selected", (event) => {
        if (event && event.range && event.range.x) setTriggerValue("box", event.range.x);
      });
    }
  };
  draw();
}
