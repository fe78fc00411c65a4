// Writes entities with @azure/data-tables to a table service (Azurite) and
// records, for each, the request body the SDK sent and the stored entity
// as the service returns it in full, minimal and no metadata.
// Usage: node capture.js <table endpoint, e.g. http://127.0.0.1:P/devstoreaccount1> <out dir>
const fs = require("fs");
const path = require("path");
const { TableClient, AzureNamedKeyCredential } = require("@azure/data-tables");
const { createPipelineRequest, createDefaultHttpClient, createHttpHeaders } = require("@azure/core-rest-pipeline");

const [endpoint, outDir] = process.argv.slice(2);
const account = "devstoreaccount1";
const key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const tableName = "interop" + Date.now();
const sent = [];
const recorder = {
  name: "recordRequestBodies",
  async sendRequest(request, next) {
    if (request.method !== "GET" && request.body) sent.push(String(request.body));
    return next(request);
  },
};
const client = new TableClient(endpoint, tableName, new AzureNamedKeyCredential(account, key), {
  allowInsecureConnection: true,
  additionalPolicies: [{ policy: recorder, position: "perCall" }],
});
const http = createDefaultHttpClient();
const formats = { full: "fullmetadata", minimal: "minimalmetadata", none: "nometadata" };
const odataKey = (s) => encodeURIComponent(s.replace(/'/g, "''"));

async function get(url, accept) {
  const req = createPipelineRequest({
    url,
    method: "GET",
    allowInsecureConnection: true,
    headers: createHttpHeaders({ Accept: "application/json;odata=" + accept, "x-ms-version": "2019-02-02", DataServiceVersion: "3.0" }),
  });
  const res = await client.pipeline.sendRequest(http, req);
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${res.bodyAsText}`);
  return res.bodyAsText;
}

function write(name, text) {
  fs.writeFileSync(path.join(outDir, name), text.endsWith("\n") ? text : text + "\n");
}

// Entities written one by one with createEntity.
const single = {
  types: {
    partitionKey: "js", rowKey: "types",
    Str: "hello ünïcödé 😀 \"q\" \\ /",
    Int32: 42,
    Int32Min: -2147483648,
    Int64Big: { value: "9007199254740993", type: "Int64" },
    Int64BigInt: 9223372036854775807n,
    Int64Min: { value: "-9223372036854775808", type: "Int64" },
    DoubleFrac: 2.5,
    DoubleWhole: { value: 2, type: "Double" },
    DoubleWholeNumber: 2.0,
    DoubleExp: 1e21,
    DoubleTiny: 5e-324,
    DoubleNaN: { value: "NaN", type: "Double" },
    DoubleInf: { value: "Infinity", type: "Double" },
    DoubleNegInf: { value: "-Infinity", type: "Double" },
    Bool: true,
    Date: new Date("2012-03-04T05:06:07.123Z"),
    DateTyped: { value: "2012-03-04T05:06:07.1234567Z", type: "DateTime" },
    Guid: { value: "0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901", type: "Guid" },
    Bin: new Uint8Array([0, 1, 2, 254, 251, 255]),
    BinEmpty: new Uint8Array([]),
    StrTyped: { value: "typed", type: "String" },
    Int32Typed: { value: 7, type: "Int32" },
  },
  lookalikes: {
    partitionKey: "js", rowKey: "lookalikes",
    NumStr: "12345",
    BigNumStr: "9007199254740993",
    FloatStr: "2.5",
    ExpStr: "1e3",
    DateStr: "2012-03-04T05:06:07Z",
    GuidStr: "0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901",
    BoolStr: "true",
    B64Str: "AAEC/vv/",
    NaNStr: "NaN",
    InfStr: "Infinity",
    EmptyStr: "",
  },
  keywords: {
    partitionKey: "js", rowKey: "keywords",
    and: "a", or: "o", not: "n", eq: 1, ne: 2, gt: 3, ge: 4, lt: 5, le: 6,
    true: false, false: true, null: "null", INF: 1.5, NaN: "x",
    AND: "A", Or: "O", NOT: "N", Eq: 7, TRUE: "T", Null: "N", inf: "i", nan: "n",
  },
  "quote-key": { partitionKey: "Ü'p k", rowKey: "O'Brien", Name: "quote" },
  "empty-keys": { partitionKey: "", rowKey: "", Name: "both empty" },
  "empty-pk": { partitionKey: "", rowKey: "a", Name: "empty partition" },
  "empty-rk": { partitionKey: "x", rowKey: "", Name: "empty row" },
  "unicode-keys": { partitionKey: "日本語", rowKey: "😀 100% a+b ''", Name: "unicode" },
};

// One transaction in an awkward partition.
const batchPK = "Ü'p k";
const batch = [
  ["create", { partitionKey: batchPK, rowKey: "b1", N: 1 }],
  ["create", { partitionKey: batchPK, rowKey: "b'2", Big: { value: "9007199254740993", type: "Int64" } }],
  ["create", { partitionKey: batchPK, rowKey: "", D: { value: 2, type: "Double" } }],
];

(async () => {
  fs.mkdirSync(outDir, { recursive: true });
  await client.createTable();
  for (const [name, e] of Object.entries(single)) {
    sent.length = 0;
    await client.createEntity(e);
    write(`${name}.request.json`, sent[0]);
    const url = `${endpoint}/${tableName}(PartitionKey='${odataKey(e.partitionKey)}',RowKey='${odataKey(e.rowKey)}')`;
    for (const [f, accept] of Object.entries(formats)) {
      write(`${name}.${f}.json`, await get(url, accept));
    }
  }
  sent.length = 0;
  await client.submitTransaction(batch);
  write("transaction.request.txt", sent.join("\n"));
  for (const [f, accept] of Object.entries(formats)) {
    const filter = encodeURIComponent(`PartitionKey eq '${batchPK.replace(/'/g, "''")}'`);
    write(`transaction.query.${f}.json`, await get(`${endpoint}/${tableName}()?$filter=${filter}`, accept));
  }
  await client.deleteTable();
  const pkg = require("@azure/data-tables/package.json");
  console.log(`@azure/data-tables ${pkg.version}, node ${process.version}`);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
