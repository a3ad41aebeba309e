// Says, once, that the browser has painted the page's first chart (or waited 3 s for one): the server then draws
// the rest of the page (ui/web/first_paint.py). Asked for after the frame the chart is in, so that frame is on
// screen.
export default function ({ parentElement, setTriggerValue }) {
  if (parentElement.fusionvizAsked) return;
  parentElement.fusionvizAsked = true;
  const since = performance.now();
  const ask = () => {
    const drawn = [...document.querySelectorAll(".js-plotly-plot .main-svg")].some((svg) => svg.checkVisibility());
    if (drawn || performance.now() - since > 3000) {
      requestAnimationFrame(() => setTimeout(() => setTriggerValue("painted", true), 0));
    } else {
      setTimeout(ask, 20);
    }
  };
  ask();
}
