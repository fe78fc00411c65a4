// jsvectors.mjs writes jsvectors.json: SAS tokens made by the JavaScript SDK
// (@azure/data-tables 13.3.2, generateTableSas and generateAccountSas) for
// the inputs below, which the Go tests sign again and compare with.
//
//	npm install @azure/data-tables@13.3.2
//	node jsvectors.mjs > jsvectors.json
import { AzureNamedKeyCredential, generateTableSas, generateAccountSas } from "@azure/data-tables";
import { writeFileSync } from "node:fs";

const dev = ["devstoreaccount1", "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="];
const other = ["myaccount", Buffer.from("another key, 32 bytes long......").toString("base64")];

const table = [
  { name: "read only", cred: dev, table: "Orders", permissions: "r", expiry: "2030-01-02T03:04:05Z" },
  { name: "all permissions with start", cred: dev, table: "orders", permissions: "raud", start: "2024-05-01T10:00:00Z", expiry: "2024-05-01T11:00:00Z" },
  { name: "partition", cred: dev, table: "Orders", permissions: "raud", expiry: "2030-01-01T00:00:00Z", spk: "user42", epk: "user42" },
  { name: "partition and rows", cred: other, table: "Tenants", permissions: "ru", start: "2025-12-31T23:59:59Z", expiry: "2026-01-01T00:59:59Z", spk: "contoso", srk: "user42 ", epk: "contoso", erk: "user42 \uffff" },
  { name: "ip range and https", cred: other, table: "Mixed", permissions: "ad", expiry: "2030-06-30T12:00:00Z", ip: { start: "168.1.5.60", end: "168.1.5.70" }, protocol: "https" },
  { name: "single ip, both protocols", cred: dev, table: "Mixed", permissions: "r", expiry: "2030-06-30T12:00:00Z", ip: { start: "10.0.0.1" }, protocol: "https,http" },
  { name: "stored policy only", cred: dev, table: "Policies", identifier: "readers-2024" },
  { name: "stored policy with range", cred: other, table: "Policies", identifier: "p1", spk: "a", epk: "m" },
  { name: "awkward keys", cred: other, table: "Keys", permissions: "raud", expiry: "2030-01-01T00:00:00Z", spk: "O'Brien & Sons", srk: "a+b=c%d", epk: "Zürich 東京", erk: "😀 end" },
  { name: "start bounds only", cred: dev, table: "Orders", permissions: "r", expiry: "2030-01-01T00:00:00Z", spk: "m", srk: "0001" },
  { name: "end bounds only", cred: dev, table: "Orders", permissions: "r", expiry: "2030-01-01T00:00:00Z", epk: "m", erk: "9999" },
];

const account = [
  { name: "read objects", cred: dev, permissions: "r", resourceTypes: "o", expiry: "2030-01-02T03:04:05Z" },
  { name: "everything", cred: other, permissions: "rwdlau", resourceTypes: "sco", start: "2024-05-01T10:00:00Z", expiry: "2024-05-02T10:00:00Z", ip: { start: "168.1.5.60", end: "168.1.5.70" }, protocol: "https" },
  { name: "list tables", cred: dev, permissions: "l", resourceTypes: "c", expiry: "2030-01-01T00:00:00Z", protocol: "https,http" },
];

const perms = (s) => ({ query: s.includes("r"), add: s.includes("a"), update: s.includes("u"), delete: s.includes("d") });
const date = (s) => (s ? new Date(s) : undefined);
const out = { table: [], account: [] };
for (const c of table) {
  const opts = { startsOn: date(c.start), expiresOn: date(c.expiry), identifier: c.identifier, ipRange: c.ip, protocol: c.protocol,
    startPartitionKey: c.spk, startRowKey: c.srk, endPartitionKey: c.epk, endRowKey: c.erk };
  if (c.permissions) opts.permissions = perms(c.permissions);
  out.table.push({ ...c, account: c.cred[0], key: c.cred[1], cred: undefined, token: generateTableSas(c.table, new AzureNamedKeyCredential(...c.cred), opts) });
}
for (const c of account) {
  const p = {};
  for (const [ch, k] of [["r", "query"], ["w", "write"], ["d", "delete"], ["l", "list"], ["a", "add"], ["u", "update"]]) if (c.permissions.includes(ch)) p[k] = true;
  const token = generateAccountSas(new AzureNamedKeyCredential(...c.cred), {
    expiresOn: date(c.expiry), startsOn: date(c.start), permissions: p, resourceTypes: c.resourceTypes, services: { table: true }, ipRange: c.ip, protocol: c.protocol });
  out.account.push({ ...c, account: c.cred[0], key: c.cred[1], cred: undefined, token });
}
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
