// The provider for a name, with its options (which only k3d and kind have).
import type { Env } from '../../config';
import type { ContainerRuntime } from '../tools/container-runtime';
import type { Provider, ProviderName } from '../types';
import { k3dProvider, K3D_DEFAULTS } from './k3d';
import { kindProvider } from './kind';
import { localProvider } from './local';

export interface ProviderOptions {
  runtime?: ContainerRuntime | null;
  registryPort?: number;
  /** A --primary-cni manifest replaces the provider's built-in network. */
  primaryCni?: string | null;
}

/** `env`: the front door's, where the container runtime is looked for (PATH, SRIOVCTL_CONTAINER_RUNTIME, …). */
export function makeProvider(name: ProviderName, env: Env, opts: ProviderOptions = {}): Provider {
  switch (name) {
    case 'local':
      return localProvider();
    case 'k3d':
      return k3dProvider(env, {
        runtime: opts.runtime ?? null,
        registryPort: opts.registryPort ?? K3D_DEFAULTS.registryPort,
        primaryCni: !!opts.primaryCni,
      });
    case 'kind':
      return kindProvider(env, { runtime: opts.runtime ?? null });
  }
}
