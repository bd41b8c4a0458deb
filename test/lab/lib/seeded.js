// Seeded moments for the scenarios that kill a process: the same on every run unless LAB_SEED says otherwise.
'use strict';

const { createHash } = require('node:crypto');

/** The run's seed: LAB_SEED, or `fallback` (each scenario file's own). */
const labSeed = (fallback) => Number(process.env.LAB_SEED ?? fallback);

/** A fraction in [0, 1) from a seed and a round. */
function seededFraction(seed, round) {
  return createHash('sha256').update(`${seed}:${round}`).digest().readUInt32BE(0) / 2 ** 32;
}

module.exports = { labSeed, seededFraction };
