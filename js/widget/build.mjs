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
  // the session browser (%durable sessions) is a bundle of its own: the session widget's stays as small
  entryPoints: {
    widget: join(here, "src", "index.ts"),
    export: join(here, "src", "export.ts"),
    browser: join(here, "src", "browser", "index.ts"),
  },
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
await copyFile(join(here, "src", "browser", "browser.css"), join(out, "browser.css"));

// anywidget loads the module's default export; esbuild writes it as `export { x as default }`: say it plainly.
for (const name of ["widget.js", "browser.js"]) {
  const file = join(out, name);
  const text = await readFile(file, "utf8");
  const plain = text.replace(/\nexport \{\n  (\w+) as default\n\};\n$/, "\nexport default $1;\n");
  if (plain === text) throw new Error(`build.mjs: ${name} has no single default export to write plainly`);
  await writeFile(file, plain);
}
