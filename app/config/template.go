package config

// defaultTemplate is written as config.toml on first start. Its
// placeholders are the user id, the user's name, the agent key and the
// user id again.
const defaultTemplate = `# Corral configuration. Every key is shown with its default value;
# uncomment a line to change it. docs/protocol.md section 2 describes them all.

[server]
# listen = "127.0.0.1:8765"      # --listen overrides
# public_url = ""                # empty: http://<listen address>
# lan = false                    # true: also accept paired devices from the LAN
# max_message_bytes = 16777216

[sandbox]
# base = ""                      # empty: the "sandbox" folder beside corral.db
# shared_dir = "share"
# output_dir = "output"
# strict = true                  # no answer / nobody to ask: deny
# approval_timeout = "2m"
# quota_mb = 0                  # the most each person's folder (and the shared folder) may hold, in MiB; 0: no quota

# Extra host folders agents may use without asking:
# [[sandbox.roots]]
# path = "~/Documents/agent-inbox"
# access = "read"                # "read" or "readwrite"

[links]
# expiry = "24h"                 # default link lifetime
# max_expiry = "8760h"           # the longest a caller may ask for
# save_result_max_kb = 500

[exec]
# enabled = true
# ask = false                    # true: each new command needs the owner's approval
# timeout = "2m"
# max_output_kb = 1024
# max_running = 8               # commands running at once, all agents together (more wait up to 30 s)
# max_running_per_agent = 4     # commands one agent may run at once
# queue_wait = "30s"            # how long a command waits for a free slot before it is refused
# max_memory_mb = 2048          # memory of one whole command, where a memory cgroup can be had
# max_connections = 32          # network: connections a command may have open at once
# max_upload_mb = 256           # network: what a command may send out in total, in MiB
# allow_private = []            # network: "host:port" on this computer or your LAN commands may reach, e.g. ["192.168.1.20:8123"]

[audit]
# retention = "2160h"
# agent_calls_per_second = 50   # each agent's calls: faster ones are refused and counted in one event
# agent_call_burst = 200        # … after this many at once

[versions]                       # what agents change is kept so you can undo it
# enabled = true
# retention = "30d"              # how long a version is kept
# max_size_mb = 0                # total; 0: 5 GiB or 10%% of the free space, whichever is smaller
# max_file_mb = 256              # a larger file is recorded without its content

[desktop]
# notifications = true           # the tray: a desktop notification with each question

[[users]]
id = %q
name = %q

# The agent on this computer. Give it this key as CORRAL_KEY (or as
# "Authorization: Bearer <key>" on ws://ADDRESS/ws, ADDRESS being where
# Corral listens: [server] listen, 127.0.0.1:8765 unless changed).
[[clients]]
name = "local-agent"
key = %q
user = %q
act_for = []
`
