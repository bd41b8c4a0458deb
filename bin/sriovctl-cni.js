#!/usr/bin/env node
'use strict';
// The CNI plugin: one bundled file, so a call pays for as little module loading as possible.
process.exitCode = require('../dist/sriovctl-cni.bundle.js').main();
