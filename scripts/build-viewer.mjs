// Bundles the run viewer (src/viewer) into dist/viewer: one script and one style sheet whose names carry a hash of
// their content (so that they can be cached for a year), and index.html naming them. `npm run build` runs it.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { build } from "esbuild";

const root = resolve(import.meta.dirname, "..");
const source = join(root, "src", "viewer");
const output = join(root, "dist", "viewer");
rmSync(output, { recursive: true, force: true });
mkdirSync(join(output, "assets"), { recursive: true });

const result = await build({
  entryPoints: { viewer: join(source, "main.ts"), style: join(source, "viewer.css") },
  bundle: true,
  minify: true,
  format: "esm",
  target: ["chrome111", "firefox115", "safari16.4"],
  entryNames: "[name]-[hash]",
  outdir: join(output, "assets"),
  metafile: true,
  legalComments: "none",
  logLevel: "warning",
});
const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
const script = outputs.find((name) => name.startsWith("viewer-") && name.endsWith(".js"));
const style = outputs.find((name) => name.startsWith("style-") && name.endsWith(".css"));
if (script === undefined || style === undefined)
  throw new Error(`the viewer build made ${outputs.join(", ")}`);
const page = readFileSync(join(source, "page.html"), "utf8")
  .replace("{{js}}", script)
  .replace("{{css}}", style);
writeFileSync(join(output, "index.html"), page);
console.log(`run viewer: dist/viewer/assets/${script}, ${style}`);
