import fs from "node:fs";
// Validates Kubernetes manifests against the API schemas of kubernetes-models
// (generated from Kubernetes OpenAPI): node validate.mjs FILE.yaml...
import YAML from "yaml";
let pass = 0, fail = 0;
for (const f of process.argv.slice(2)) {
  for (const doc of YAML.parseAllDocuments(fs.readFileSync(f, "utf8"))) {
    const o = doc.toJS();
    if (!o) continue;
    const i = o.apiVersion.lastIndexOf("/");
    const mod = "kubernetes-models/" + (i < 0 ? o.apiVersion : o.apiVersion);
    let Cls;
    try { Cls = (await import(mod))[o.kind]; } catch (e) { Cls = undefined; }
    if (!Cls) { console.log(`FAIL ${f}: ${o.kind} ${o.apiVersion}: no schema`); fail++; continue; }
    try { new Cls(o).validate(); console.log(`PASS ${f}: ${o.kind} ${o.metadata?.name}`); pass++; }
    catch (e) { console.log(`FAIL ${f}: ${o.kind} ${o.metadata?.name}: ${e.message.slice(0, 500)}`); fail++; }
  }
}
console.log(`k8s: ${pass} passed, ${fail} failed`);
process.exit(fail ? 1 : 0);
