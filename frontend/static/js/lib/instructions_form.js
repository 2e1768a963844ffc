// The four forms of an agent's instructions as editable blocks, without any DOM:
//   text      "Be brief."
//   list      ["Be brief.", "Cite sources."]
//   messages  [{role: "system", content}]            (a single message object is read too)
//   options   [{role: "system", content, providerOptions}]
// A block is {content, providerOptions} with providerOptions as JSON text ("" for none).

import { formatJson } from "./format.js";

export const FORMS = {
  text: "Plain text",
  list: "A list of blocks",
  messages: "System messages",
  options: "Blocks with provider options",
};

export function formOf(instructions) {
  if (typeof instructions === "string" || instructions == null) return "text";
  const items = Array.isArray(instructions) ? instructions : [instructions];
  if (items.length === 0 || items.every((item) => typeof item === "string")) return "list";
  return items.some((item) => item && item.providerOptions && Object.keys(item.providerOptions).length)
    ? "options"
    : "messages";
}

export function blocksOf(instructions) {
  if (instructions == null || instructions === "") return [{ content: "", providerOptions: "" }];
  const items = Array.isArray(instructions) ? instructions : [instructions];
  return items.map((item) => typeof item === "string"
    ? { content: item, providerOptions: "" }
    : {
      content: item.content || "",
      providerOptions: item.providerOptions && Object.keys(item.providerOptions).length
        ? formatJson(item.providerOptions) : "",
    });
}

// The instructions value of `blocks` in `form`; throws an Error naming the block whose
// provider options are not a JSON object.
export function instructionsFrom(form, blocks) {
  if (form === "text") return blocks.map((b) => b.content).join("\n\n");
  if (form === "list") return blocks.map((b) => b.content);
  return blocks.map((block, index) => {
    const message = { role: "system", content: block.content };
    if (form === "options" && block.providerOptions.trim()) {
      let options;
      try {
        options = JSON.parse(block.providerOptions);
      } catch (err) {
        throw new Error(`Block ${index + 1}: provider options are not valid JSON (${err.message}).`);
      }
      if (!options || typeof options !== "object" || Array.isArray(options)) {
        throw new Error(`Block ${index + 1}: provider options must be a JSON object.`);
      }
      message.providerOptions = options;
    }
    return message;
  });
}

// The editor page's textarea holds instructions as text (the text form) or as indented JSON.
export const asEditorText = (value) => (typeof value === "string" ? value : formatJson(value));
