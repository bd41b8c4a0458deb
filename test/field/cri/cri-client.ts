// A CRI client speaking runtime.v1 over containerd's gRPC socket, as kubelet does: the real definition
// (api.proto, copied from Kubernetes) loaded at run time with @grpc/proto-loader, only the calls the tests use.
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const PROTO = join(__dirname, 'api.proto');
/** Every call has a deadline: a wedged runtime fails the test instead of hanging it. */
const CALL_DEADLINE_MS = 60_000;

export interface SandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt?: number;
}

/** What PodSandboxStatus says about one sandbox (the fields the tests read). */
export interface SandboxStatus {
  id: string;
  state: 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
  /** network.ip: the pod IP the runtime took from the CNI result. */
  ip: string;
  additionalIps: string[];
  /** The network namespace path from the verbose info's runtime spec ('' when it has none). */
  netnsPath: string;
}

type Unary = (req: object, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: any) => void) => void;

let runtimeService: grpc.ServiceClientConstructor | null = null;

function runtimeServiceClient(): grpc.ServiceClientConstructor {
  if (!runtimeService) {
    const def = protoLoader.loadSync(PROTO, { longs: String, enums: String, defaults: true, oneofs: true });
    const pkg = grpc.loadPackageDefinition(def) as any;
    runtimeService = pkg.runtime.v1.RuntimeService as grpc.ServiceClientConstructor;
  }
  return runtimeService;
}

export class CriClient {
  private readonly client: grpc.Client;

  constructor(socket: string) {
    const Ctor = runtimeServiceClient();
    this.client = new Ctor(`unix://${socket}`, grpc.credentials.createInsecure());
  }

  close(): void {
    this.client.close();
  }

  private call<T = any>(method: string, req: object, deadlineMs = CALL_DEADLINE_MS): Promise<T> {
    const fn = (this.client as unknown as Record<string, Unary>)[method].bind(this.client);
    return new Promise((resolve, reject) => fn(req, { deadline: Date.now() + deadlineMs }, (err, res) => (err ? reject(err) : resolve(res))));
  }

  version(deadlineMs?: number): Promise<{ runtimeName: string; runtimeVersion: string; runtimeApiVersion: string }> {
    return this.call('Version', {}, deadlineMs);
  }

  /** Status(verbose): the runtime's conditions, and the CNI configuration it has loaded (info.cniconfig). */
  async status(): Promise<{ conditions: { type: string; status: boolean; reason: string; message: string }[]; cniConfig: any }> {
    const res = await this.call('Status', { verbose: true });
    return { conditions: res.status.conditions, cniConfig: res.info.cniconfig ? JSON.parse(res.info.cniconfig) : null };
  }

  /** RunPodSandbox; `cgroupParent` is where the runtime puts the sandbox's cgroup (kubelet's kubepods slice). */
  async runPodSandbox(metadata: SandboxMetadata, cgroupParent: string): Promise<string> {
    const config = { metadata: { attempt: 0, ...metadata }, hostname: metadata.name, linux: { cgroupParent } };
    const res = await this.call('RunPodSandbox', { config });
    return res.podSandboxId;
  }

  async podSandboxStatus(id: string): Promise<SandboxStatus> {
    const res = await this.call('PodSandboxStatus', { podSandboxId: id, verbose: true });
    const info = res.info.info ? JSON.parse(res.info.info) : {};
    const namespaces: { type: string; path?: string }[] = info.runtimeSpec?.linux?.namespaces ?? [];
    return {
      id: res.status.id,
      state: res.status.state,
      ip: res.status.network?.ip ?? '',
      additionalIps: (res.status.network?.additionalIps ?? []).map((p: { ip: string }) => p.ip),
      netnsPath: namespaces.find((n) => n.type === 'network')?.path ?? '',
    };
  }

  async stopPodSandbox(id: string): Promise<void> {
    await this.call('StopPodSandbox', { podSandboxId: id });
  }

  async removePodSandbox(id: string): Promise<void> {
    await this.call('RemovePodSandbox', { podSandboxId: id });
  }

  async listPodSandbox(): Promise<{ id: string; state: string; metadata: SandboxMetadata }[]> {
    const res = await this.call('ListPodSandbox', {});
    return res.items;
  }
}
