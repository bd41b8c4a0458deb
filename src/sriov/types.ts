// The sysfs model's values. Netdev names come from sysfs, which lists only the namespace that mounted it (for
// sriovctl: the initial one); a NIC lent elsewhere is absent from these lists, so treat names as hints.

/** A network device as sysfs shows it under a bus device (`<device>/net/<name>`). */
export interface SysNetdev {
  name: string;
  /** From `net/<name>/address`; null when unreadable. */
  mac: string | null;
}

/** An SR-IOV physical function: a PCI device, or a netdevsim bus device (which has only sriov_numvfs). */
export interface SriovPf {
  /** The bus address: a PCI BDF ('0000:03:00.0') or the bus device name ('netdevsim1'). */
  address: string;
  /** 'pci', 'netdevsim', … (the device's subsystem). */
  bus: string;
  /** sriov_totalvfs, or null when the device does not have it. */
  totalVfs: number | null;
  numVfs: number;
  driver: string | null;
  netdevs: SysNetdev[];
  /** VF PCI addresses by VF index (from virtfnN); empty for buses without VF devices (netdevsim). */
  vfs: string[];
}

export interface SriovVf {
  /** The VF number on its PF (N of the PF's virtfnN link). */
  index: number;
  address: string;
  pfAddress: string;
  driver: string | null;
  /** Bound to vfio-pci, uio_pci_generic or igb_uio: no netdev, used by userspace (DPDK). */
  userspace: boolean;
  netdevs: SysNetdev[];
}

/** Where a netdev's `device` link leads. */
export interface NetdevDevice {
  /** The bus address of the device the netdev belongs to ('0000:03:00.1', 'netdevsim1', 'virtio2'). */
  address: string;
  bus: string | null;
  /** The PCI address of that device or of its nearest PCI ancestor (virtio-net sits under a PCI device). */
  pciAddress: string | null;
}
