// An agent's default options as form values and back, without any DOM. The form holds
// strings and booleans; the options are what PATCH /api/agents/<slug>/ takes as
// `default_options` (keys the form does not show are kept as they are).

export const MEMORY_DEFAULT = 200; // agents_core.runtime.storage.messages.MEMORY_LIMIT

export function formOfOptions(options = {}) {
  const choice = options.toolChoice;
  return {
    maxSteps: options.maxSteps == null ? "" : String(options.maxSteps),
    toolChoice: typeof choice === "object" && choice ? "tool" : choice || "auto",
    toolName: typeof choice === "object" && choice ? choice.toolName : "",
    activeTools: options.activeTools == null ? null : [...options.activeTools],
    autoResume: Boolean(options.autoResume),
    temperature: options.temperature == null ? "" : String(options.temperature),
    modelSettings: options.modelSettings ? JSON.stringify(options.modelSettings, null, 2) : "",
    lastMessages: options.lastMessages == null ? "" : String(options.lastMessages),
    generateTitle: options.generateTitle !== false,
  };
}

// The options of a filled form; throws an Error naming the field that cannot be read.
export function optionsOfForm(form, current = {}) {
  const options = { ...current };
  const number = (key, text, parse) => {
    if (text.trim() === "") return delete options[key];
    const value = parse(text);
    if (Number.isNaN(value)) throw new Error(`${key}: not a number.`);
    options[key] = value;
  };
  number("maxSteps", form.maxSteps, (t) => (/^\d+$/.test(t.trim()) ? Number(t) : NaN));
  number("temperature", form.temperature, Number);
  number("lastMessages", form.lastMessages, (t) => (/^\d+$/.test(t.trim()) ? Number(t) : NaN));
  if (form.toolChoice === "tool") options.toolChoice = { type: "tool", toolName: form.toolName };
  else if (form.toolChoice === "auto") delete options.toolChoice;
  else options.toolChoice = form.toolChoice;
  if (form.activeTools == null) delete options.activeTools;
  else options.activeTools = form.activeTools;
  if (form.autoResume) options.autoResume = true;
  else delete options.autoResume;
  if (form.generateTitle) delete options.generateTitle;
  else options.generateTitle = false;
  if (form.modelSettings.trim()) {
    try {
      options.modelSettings = JSON.parse(form.modelSettings);
    } catch (err) {
      throw new Error(`modelSettings: not valid JSON (${err.message}).`);
    }
  } else delete options.modelSettings;
  return options;
}
