// Bundle the widget (anywidget's ES module) and the exported page's script into durable_nb/static/,
// and copy the stylesheet there. `node build.mjs` (npm run build); ./dev build runs it.
import { build } from "esbuild";
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "..", "durable_nb", "static");
await mkdir(out, { recursive: true });
await build({
  entryPoints: { widget: join(here, "src", "index.ts"), export: join(here, "src", "export.ts") },
  outdir: out,
  bundle: true,
  format: "esm",
  target: "es2020",
  charset: "utf8",
  legalComments: "none",
  logLevel: "warning",
  banner: { js: "// generated from js/widget/src by esbuild (./dev build): edit the TypeScript, not this file" },
});
await copyFile(join(here, "src", "widget.css"), join(out, "widget.css"));

// anywidget loads the module's default export; esbuild writes it as `export { x as default }`: say it plainly.
const widget = join(out, "widget.js");
const text = await readFile(widget, "utf8");
const plain = text.replace(/\nexport \{\n  (\w+) as default\n\};\n$/, "\nexport default $1;\n");
if (plain === text) throw new Error("build.mjs: widget.js has no single default export to write plainly");
await writeFile(widget, plain);
