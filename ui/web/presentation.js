// Presentation mode in the browser: the page's stylesheet applies under `html.fv-present`, and this element sets
// that class. It follows the server (data.on) on every run, and the toggle's own input at once, so that a flip
// restyles the page, redraws the kept plots at their presentation layout (plotly_view.js watches the class) and
// folds the sidebar before the server has answered. ST: Streamlit's selectors (ui/web/selectors.py).
function apply(on) {
  const root = document.documentElement;
  if (root.classList.contains("fv-present") === on) return;
  root.classList.toggle("fv-present", on);
  // Streamlit's own button: the sidebar stays one click away, to change the configuration without leaving.
  const fold = document.querySelector(`${ST.SIDEBAR_BUTTON}[aria-expanded="${on}"]`);
  if (fold) fold.click();
}

export default function ({ data }) {
  apply(data.on);
  const input = data.toggle ? document.querySelector(`.${data.toggle} input`) : null;
  if (input && !input.fusionvizMode) {
    input.fusionvizMode = true;
    input.addEventListener("change", () => apply(input.checked));
  }
}
