// /tests/: "Run" starts a suite run and opens its results page.
import { api } from "../js/lib/api.js";

const errors = document.getElementById("run-errors");

document.getElementById("suite-list").addEventListener("click", async (event) => {
  const button = event.target.closest("button.run-suite");
  if (!button) return;
  button.disabled = true;
  try {
    const run = await api(`/api/suites/${encodeURIComponent(button.dataset.suite)}/runs/`, {
      method: "POST",
      body: {},
    });
    location.assign(`/tests/runs/${run.id}/`);
  } catch (err) {
    errors.hidden = false;
    errors.textContent = err.message;
    button.disabled = false;
  }
});
