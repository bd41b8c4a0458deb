#!/usr/bin/env python3
# A VFIO user, as QEMU or a DPDK app is one: opens /dev/vfio/<group>, attaches it to a type1 container and takes
# the VF's device fd, prints "holding" and keeps them until killed. Used by the lab's igb scenarios.
#   vfio-hold.py /dev/vfio/<group> <vf-bdf>
import fcntl
import os
import struct
import sys
import time

VFIO_GROUP_SET_CONTAINER = 0x3B68   # _IO(VFIO_TYPE, VFIO_BASE + 4)
VFIO_SET_IOMMU = 0x3B66             # _IO(VFIO_TYPE, VFIO_BASE + 2)
VFIO_GROUP_GET_DEVICE_FD = 0x3B6A   # _IO(VFIO_TYPE, VFIO_BASE + 6)
VFIO_TYPE1_IOMMU = 1

group_path, bdf = sys.argv[1], sys.argv[2]
group = os.open(group_path, os.O_RDWR)
container = os.open('/dev/vfio/vfio', os.O_RDWR)
fcntl.ioctl(group, VFIO_GROUP_SET_CONTAINER, struct.pack('i', container))
fcntl.ioctl(container, VFIO_SET_IOMMU, VFIO_TYPE1_IOMMU)
device = fcntl.ioctl(group, VFIO_GROUP_GET_DEVICE_FD, bdf.encode() + b'\0')
print('holding', flush=True)
while True:
    time.sleep(3600)
