// What every verb module exports: a handler from the parsed environment and config to a result (ADD) or
// nothing. Handlers throw CniError for every expected failure.
import type { Config } from '../config';
import type { CniEnv } from './env';
import type { NetConf } from './netconf';
import type { CniResult } from './result';

export interface VerbContext {
  env: CniEnv;
  conf: NetConf;
  /** Read once from the environment by run(); the verbs that lend make their session from it. */
  config: Config;
}

export type VerbHandler = (ctx: VerbContext) => CniResult | null | Promise<CniResult | null>;
