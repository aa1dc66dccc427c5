// Copy the widget's bundle (durable_nb/static/widget.js, built first) into the extension's static
// folder named by its content's hash, so the Jupyter server serves it and a widget's state carries a
// ~2 KB loader instead of the code (durable_nb/widget/module.py computes the same names). After
// `jupyter labextension build`, which empties that folder.
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "durable_nb");
for (const name of ["widget.js"]) {
  const bytes = await readFile(join(root, "static", name));
  const digest = createHash("sha256").update(bytes).digest("hex").slice(0, 16);
  const [stem, ext] = name.split(".");
  await writeFile(join(root, "labextension", "static", `${stem}-${digest}.${ext}`), bytes);
}
