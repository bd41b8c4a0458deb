// SPDX-License-Identifier: GPL-2.0
/*
 * lab_sf — the kernel lab's stand-in for a Scalable Function: ONE device on the kernel's real auxiliary bus,
 * lab_sf.sf.4 (under /sys/devices/lab_sf/), with an Ethernet netdev as its child, as mlx5 gives an SF.
 * No NIC QEMU emulates has SFs and netdevsim registers no auxiliary device, so without this the lab's
 * auxiliary bus is empty. What it makes real for sriovctl: the sysfs layout
 * (/sys/bus/auxiliary/devices/<id> -> the device, its net/<name>), ethtool's bus-info naming the auxiliary ID
 * (as mlx5's SF netdevs report it), and a netdev without rtnl_link_ops, which the kernel hands back to the
 * initial namespace when its namespace dies, as it does a physical NIC. It is not an SF: no eswitch, no
 * devlink port, frames sent are dropped, carrier is always on. Loaded by the lab's scenarios, removed after.
 */
#include <linux/auxiliary_bus.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/slab.h>

static struct device *lab_root;
static struct auxiliary_device *lab_adev;
static struct net_device *lab_netdev;

static netdev_tx_t lab_sf_xmit(struct sk_buff *skb, struct net_device *dev)
{
	dev->stats.tx_packets++;
	dev->stats.tx_bytes += skb->len;
	dev_kfree_skb(skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops lab_sf_netdev_ops = {
	.ndo_start_xmit = lab_sf_xmit,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
};

/* bus-info is the auxiliary device's name, as mlx5 reports it for an SF's netdev */
static void lab_sf_get_drvinfo(struct net_device *dev, struct ethtool_drvinfo *info)
{
	strscpy(info->driver, KBUILD_MODNAME, sizeof(info->driver));
	strscpy(info->bus_info, dev_name(dev->dev.parent), sizeof(info->bus_info));
}

static const struct ethtool_ops lab_sf_ethtool_ops = {
	.get_drvinfo = lab_sf_get_drvinfo,
	.get_link = ethtool_op_get_link,
};

static void lab_sf_adev_release(struct device *dev)
{
	kfree(container_of(dev, struct auxiliary_device, dev));
}

static int __init lab_sf_init(void)
{
	int err;

	lab_root = root_device_register(KBUILD_MODNAME);
	if (IS_ERR(lab_root))
		return PTR_ERR(lab_root);

	lab_adev = kzalloc(sizeof(*lab_adev), GFP_KERNEL);
	if (!lab_adev) {
		err = -ENOMEM;
		goto err_root;
	}
	lab_adev->name = "sf";
	lab_adev->id = 4;
	lab_adev->dev.parent = lab_root;
	lab_adev->dev.release = lab_sf_adev_release;
	err = auxiliary_device_init(lab_adev);
	if (err) {
		kfree(lab_adev);
		goto err_root;
	}
	err = auxiliary_device_add(lab_adev);
	if (err)
		goto err_uninit;

	lab_netdev = alloc_etherdev(0);
	if (!lab_netdev) {
		err = -ENOMEM;
		goto err_delete;
	}
	lab_netdev->netdev_ops = &lab_sf_netdev_ops;
	lab_netdev->ethtool_ops = &lab_sf_ethtool_ops;
	eth_hw_addr_random(lab_netdev);
	SET_NETDEV_DEV(lab_netdev, &lab_adev->dev);
	err = register_netdev(lab_netdev);
	if (err)
		goto err_free;
	return 0;

err_free:
	free_netdev(lab_netdev);
err_delete:
	auxiliary_device_delete(lab_adev);
err_uninit:
	auxiliary_device_uninit(lab_adev);
err_root:
	root_device_unregister(lab_root);
	return err;
}

static void __exit lab_sf_exit(void)
{
	unregister_netdev(lab_netdev);
	free_netdev(lab_netdev);
	auxiliary_device_delete(lab_adev);
	auxiliary_device_uninit(lab_adev);
	root_device_unregister(lab_root);
}

module_init(lab_sf_init);
module_exit(lab_sf_exit);
MODULE_DESCRIPTION("sriovctl kernel lab: one auxiliary-bus device with a netdev, a Scalable Function's sysfs shape");
MODULE_LICENSE("GPL");
