// Runs one ONNX model once on onnxruntime-node's CPU provider, as the peer mt's tests and benchmarks are
// compared with. Inputs and outputs are .npy files (C order); scripts/mt_models/onnxruntime.py drives it.
//
//   node ort_run.js MODEL.onnx OUT_DIR THREADS NAME=FILE.npy...
//
// Writes OUT_DIR/K.npy for the K-th graph output (0, 1, ...: names may hold '/') and prints
// {"outputs": [...names in that order], "version": ...} on stdout.
// Needs NODE_PATH to hold the node_modules directory onnxruntime-node was installed into.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// numpy descr <-> onnxruntime-node tensor type and typed array.
const TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<f2': ['float16', Uint16Array],
  '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array], '<i2': ['int16', Int16Array],
  '<u2': ['uint16', Uint16Array], '<i4': ['int32', Int32Array], '<u4': ['uint32', Uint32Array],
  '<i8': ['int64', BigInt64Array], '<u8': ['uint64', BigUint64Array], '|b1': ['bool', Uint8Array],
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerStart = major === 1 ? 10 : 12;
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const header = buf.toString('latin1', headerStart, headerStart + headerLen);
  if (header.includes("'fortran_order': True")) throw new Error(`${file}: Fortran order is not supported`);
  const descr = header.match(/'descr': '([^']*)'/)[1];
  const type = TYPES[descr];
  if (!type) throw new Error(`${file}: dtype ${descr} is not supported`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter(s => s.trim()).map(Number);
  const bytes = buf.subarray(headerStart + headerLen);
  const copy = new Uint8Array(bytes.length);  // typed arrays need aligned storage
  copy.set(bytes);
  return new ort.Tensor(type[0], new type[1](copy.buffer), shape);
}

function writeNpy(file, tensor) {
  const entry = Object.entries(TYPES).find(([, t]) => t[0] === tensor.type);
  if (!entry) throw new Error(`output type ${tensor.type} cannot be written as .npy`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${entry[0]}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'),
                                        Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main() {
  const [model, outDir, threads, ...feedArgs] = process.argv.slice(2);
  if (!model || !outDir || !threads) throw new Error('usage: node ort_run.js MODEL OUT_DIR THREADS NAME=FILE.npy...');
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: Number(threads), interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all'});
  const feeds = {};
  for (const arg of feedArgs) {
    const eq = arg.indexOf('=');
    if (eq <= 0) throw new Error(`feed '${arg}' is not NAME=FILE.npy`);
    feeds[arg.slice(0, eq)] = readNpy(arg.slice(eq + 1));
  }
  const results = await session.run(feeds);
  fs.mkdirSync(outDir, {recursive: true});
  session.outputNames.forEach((name, k) => writeNpy(path.join(outDir, `${k}.npy`), results[name]));
  console.log(JSON.stringify({outputs: session.outputNames, version: ort.env.versions.node}));
}
main().catch(e => { console.error(`ort_run: ${e.message}`); process.exit(1); });
