// The first start with nothing configured: what runs locally, and three ways to begin.
import { html, render } from "../../vendor/preact-htm.js";

function Welcome({ api, go, env }) {
  const start = async (view) => {
    await api.dismissWelcome();
    go(view);
  };
  return html`
    <div class="welcome">
      <h2>Welcome to Slipway</h2>
      <p>Nothing is configured yet, so everything runs on this computer:</p>
      <ul>
        <li><strong>a platform</strong> that registers, builds and runs your apps (data in <code>${env.platform_dir}</code>);</li>
        <li><strong>the care services</strong> with demo data: a patient, a program and a missing-information request (data in <code>${env.care_dir}</code>).</li>
      </ul>
      <p>Both start when first used and stop when the window closes. Where would you like to start?</p>
      <div class="cards starts">
        <button type="button" class="card" id="start-new" onClick=${() => start("new")}>
          <strong>New app</strong><span>Scaffold a project from a template, check it, build and run it.</span>
        </button>
        <button type="button" class="card" id="start-enroll" onClick=${() => start("enroll")}>
          <strong>Enrollment</strong><span>Enroll a patient into the demo care program.</span>
        </button>
        <button type="button" class="card" id="start-missing" onClick=${() => start("missing")}>
          <strong>Missing information</strong><span>Answer the demo request for a patient's missing details.</span>
        </button>
      </div>
    </div>`;
}

export function mount(root, ctx) {
  ctx.api.environment().then((res) => {
    render(html`<${Welcome} ...${ctx} env=${res.ok ? res.value : {}} />`, root);
  });
}
