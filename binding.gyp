{
  "targets": [
    {
      "target_name": "sriovctl",
      "sources": [ "<!@(ls -1 native/*.cc)" ],
      "include_dirs": [ "<!(node -p \"require('node-addon-api').include_dir\")" ],
      "defines": [ "NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED" ],
      "cflags!": [ "-fno-exceptions" ],
      "cflags_cc!": [ "-fno-exceptions", "-std=gnu++17" ],
      "cflags": [ "-Wall", "-Wextra", "-O2" ],
      "cflags_cc": [ "-std=c++17", "-Wall", "-Wextra", "-fexceptions", "-O2" ]
    },
    {
      "target_name": "sriovctl-sysfs-write",
      "type": "executable",
      "sources": [ "native/tools/sysfs_write.cc" ],
      "cflags_cc!": [ "-std=gnu++17" ],
      "cflags_cc": [ "-std=c++17", "-Wall", "-Wextra", "-O2" ]
    },
    {
      "target_name": "sriovctl-cni",
      "type": "executable",
      "sources": [ "native/shim/sriovctl_cni.cc" ],
      "cflags_cc!": [ "-std=gnu++17", "-fno-exceptions" ],
      "cflags_cc": [ "-std=c++17", "-Wall", "-Wextra", "-O2" ],
      "ldflags": [ "-static" ]
    }
  ]
}
