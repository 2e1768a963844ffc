// The structured instructions editor of the agent settings page: pick one of the four
// forms, edit it block by block (with per-block provider options in the last form), and
// preview the system messages the model receives, as the server builds them. It edits
// the page's instructions textarea (the value agent_edit.js saves), and follows it when
// the textarea is typed in or the server's state is loaded.

import { fill, h } from "./dom.js";
import { formatJson } from "./format.js";
import { FORMS, asEditorText, blocksOf, formOf, instructionsFrom } from "./instructions_form.js";

export class InstructionsEditor {
  constructor({ root, textarea, previewUrl, call }) {
    Object.assign(this, { root, textarea, previewUrl, call });
    this.form = "text";
    this.blocks = blocksOf("");
    this.enabled = false;
    textarea.addEventListener("input", (event) => {
      if (!event.fromEditor) this.load(this.form === "text" ? "text" : "json", this.enabled);
    });
  }

  // "text" or "json": how the textarea's value is to be read when saved.
  format() {
    return this.form === "text" ? "text" : "json";
  }

  load(format, enabled) {
    this.enabled = enabled;
    const text = this.textarea.value;
    let value = text;
    if (format === "json") {
      try {
        value = JSON.parse(text);
      } catch {
        return this.render("The raw value is not valid JSON yet; fix it below.");
      }
    }
    this.form = formOf(value);
    this.blocks = blocksOf(value);
    this.render();
  }

  // The blocks changed: write the textarea and tell the page (an "input" event).
  sync() {
    let problem = "";
    try {
      this.textarea.value = asEditorText(instructionsFrom(this.form, this.blocks));
      const event = new Event("input", { bubbles: true });
      event.fromEditor = true;
      this.textarea.dispatchEvent(event);
    } catch (err) {
      problem = err.message;
    }
    this.root.querySelector(".instructions-problem").textContent = problem;
  }

  render(problem = "") {
    const disabled = !this.enabled;
    const select = h("select", {
      id: "instructions-form", "aria-label": "Form of the instructions", disabled,
      onchange: (event) => { this.form = event.target.value; this.render(); this.sync(); },
    }, Object.entries(FORMS).map(([value, label]) => h("option", { value, selected: value === this.form }, label)));
    select.value = this.form;
    const blocks = this.form === "text" ? this.blocks.slice(0, 1) : this.blocks;
    fill(this.root,
      h("div", { class: "field-head" }, h("label", { class: "inline" }, "Form ", select), h("span", { class: "grow" }),
        h("button", { type: "button", class: "secondary", id: "instructions-preview", onclick: () => this.preview() }, "Preview")),
      h("ol", { class: "instruction-blocks" }, blocks.map((block, index) => this.blockRow(block, index, disabled))),
      this.form === "text" ? null : h("button", {
        type: "button", class: "link-button", id: "instructions-add", disabled,
        onclick: () => { this.blocks.push({ content: "", providerOptions: "" }); this.render(); this.sync(); },
      }, "Add a block"),
      h("p", { class: "error instructions-problem" }, problem),
      h("div", { class: "instructions-preview", id: "instructions-preview-out", hidden: true }));
  }

  blockRow(block, index, disabled) {
    const edit = (key) => (event) => {
      block[key] = event.target.value;
      this.sync();
    };
    return h("li", { class: "instruction-block" },
      h("textarea", {
        rows: this.form === "text" ? 8 : 3, value: block.content, disabled, class: "block-content",
        "aria-label": `Block ${index + 1}`, oninput: edit("content"),
      }),
      this.form === "options" ? h("textarea", {
        rows: 2, value: block.providerOptions, disabled, class: "block-options",
        placeholder: '{"anthropic": {"cacheControl": {"type": "ephemeral"}}}',
        "aria-label": `Provider options of block ${index + 1}`, oninput: edit("providerOptions"),
      }) : null,
      this.form !== "text" && this.blocks.length > 1 ? h("button", {
        type: "button", class: "link-button", disabled,
        onclick: () => { this.blocks.splice(index, 1); this.render(); this.sync(); },
      }, "Remove") : null);
  }

  async preview() {
    const out = this.root.querySelector("#instructions-preview-out");
    out.hidden = false;
    let instructions;
    try {
      instructions = instructionsFrom(this.form, this.blocks);
    } catch (err) {
      fill(out, h("p", { class: "error" }, err.message));
      return;
    }
    const res = await this.call(this.previewUrl, { method: "POST", body: { instructions } });
    if (!res.ok) {
      fill(out, h("p", { class: "error" }, res.data?.instructions?.join(" ") || res.data?.detail || "No preview."));
      return;
    }
    const messages = res.data.messages;
    fill(out, h("p", { class: "muted" }, `What the model receives first: ${messages.length} system message${messages.length === 1 ? "" : "s"}, then the thread.`),
      messages.map((message) => h("pre", { class: "preview-message" }, formatJson(message))));
  }
}
