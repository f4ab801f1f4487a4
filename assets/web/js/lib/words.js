// Generated from core/words (go test ./core/words -update): the one table of
// the words every surface shows for Corral's concepts. Do not edit by hand.
export const words = {
  "you": "you",
  "owner_clients": [
    "tray",
    "dialog",
    "cli",
    "owner",
    "browser"
  ],
  "device_prefix": "device:",
  "operations": [
    {
      "op": "file.read",
      "label": "Read a file"
    },
    {
      "op": "file.document_read",
      "label": "Read a document"
    },
    {
      "op": "file.write",
      "label": "Wrote a file"
    },
    {
      "op": "file.edit",
      "label": "Edited a file"
    },
    {
      "op": "file.apply_patch",
      "label": "Patched files"
    },
    {
      "op": "file.delete",
      "label": "Deleted"
    },
    {
      "op": "file.move",
      "label": "Moved"
    },
    {
      "op": "folder.create",
      "label": "Made a folder"
    },
    {
      "op": "file.stat",
      "label": "Looked at a file"
    },
    {
      "op": "folder.list",
      "label": "Listed a folder"
    },
    {
      "op": "file.find",
      "label": "Found files"
    },
    {
      "op": "file.grep",
      "label": "Searched in files"
    },
    {
      "op": "command.run",
      "label": "Ran a command"
    },
    {
      "op": "command.cancel",
      "label": "Stopped a command"
    },
    {
      "op": "network.connect",
      "label": "Used the network"
    },
    {
      "op": "network.ask",
      "label": "Asked about the network"
    },
    {
      "op": "result.save",
      "label": "Saved a report"
    },
    {
      "op": "link.create",
      "label": "Made a link"
    },
    {
      "op": "files.out",
      "label": "Link opened"
    },
    {
      "op": "links.rotate",
      "label": "Reset all links"
    },
    {
      "op": "link.revoke",
      "label": "Withdrew a link"
    },
    {
      "op": "undo.apply",
      "label": "Undid an event"
    },
    {
      "op": "version.restore",
      "label": "Restored a file"
    },
    {
      "op": "versions.forget",
      "label": "Forgot an agent's versions"
    },
    {
      "op": "rule.create",
      "label": "Rule added"
    },
    {
      "op": "rule.revoke",
      "label": "Rule revoked"
    },
    {
      "op": "rule.update",
      "label": "Rule changed"
    },
    {
      "op": "rule.import",
      "label": "Imported rules"
    },
    {
      "op": "rule.export",
      "label": "Exported rules"
    },
    {
      "op": "agent.set_level",
      "label": "Changed an agent's trust level"
    },
    {
      "op": "agents.pause",
      "label": "Paused agents"
    },
    {
      "op": "agents.resume",
      "label": "Resumed agents"
    },
    {
      "op": "agent.pause",
      "label": "Paused an agent"
    },
    {
      "op": "agent.resume",
      "label": "Resumed an agent"
    },
    {
      "op": "agent.add",
      "label": "Added an agent"
    },
    {
      "op": "agent.update",
      "label": "Changed an agent"
    },
    {
      "op": "agent.rotate_key",
      "label": "Gave an agent a new key"
    },
    {
      "op": "agent.remove",
      "label": "Removed an agent"
    },
    {
      "op": "agent.connect",
      "label": "Connected an agent"
    },
    {
      "op": "agent.throttled",
      "label": "Refused an agent's calls (too fast)"
    },
    {
      "op": "person.add",
      "label": "Added a person"
    },
    {
      "op": "person.rename",
      "label": "Renamed a person"
    },
    {
      "op": "person.remove",
      "label": "Removed a person"
    },
    {
      "op": "config.reload",
      "label": "Reloaded the settings"
    },
    {
      "op": "settings.set",
      "label": "Changed a setting"
    },
    {
      "op": "corral.restart",
      "label": "Restarted Corral"
    },
    {
      "op": "session.login",
      "label": "Made a login link"
    },
    {
      "op": "pairing.start",
      "label": "Showed a pairing code"
    },
    {
      "op": "device.pair",
      "label": "Paired a device"
    },
    {
      "op": "device.revoke",
      "label": "Revoked a device"
    }
  ],
  "decisions": {
    "allow": "Allowed",
    "deny": "Denied",
    "error": "Failed"
  },
  "decided_by": {
    "owner": "by you",
    "paused": "paused",
    "root": "open folder",
    "rule": "by a rule",
    "scope": "own folder",
    "strict": "nobody asked",
    "timeout": "timed out"
  },
  "access": {
    "delete": "delete",
    "execute": "run a command",
    "network": "network access",
    "read": "read",
    "write": "change"
  },
  "choices": [
    {
      "decision": "allow_once",
      "label": "Allow once",
      "explain": "Only this request.",
      "said": "allowed once",
      "allows": true
    },
    {
      "decision": "allow_session",
      "label": "Allow until restart",
      "explain": "This and the same requests until Corral restarts.",
      "said": "allowed until Corral restarts",
      "allows": true
    },
    {
      "decision": "allow_always",
      "label": "Always allow",
      "explain": "A rule: the same requests are allowed without asking.",
      "said": "always allowed",
      "allows": true
    },
    {
      "decision": "deny_once",
      "label": "Deny",
      "explain": "Only this request.",
      "said": "denied",
      "allows": false
    },
    {
      "decision": "deny_always",
      "label": "Always deny",
      "explain": "A rule: the same requests are denied without asking.",
      "said": "always denied",
      "allows": false
    }
  ],
  "lifetimes": [
    {
      "label": "for 1 hour",
      "value": "1h"
    },
    {
      "label": "for 1 day",
      "value": "24h"
    },
    {
      "label": "for 7 days",
      "value": "7d"
    },
    {
      "label": "for 30 days",
      "value": "30d"
    },
    {
      "label": "forever",
      "value": ""
    }
  ],
  "default_lifetime": 2,
  "always_lasts": "“Always” lasts",
  "folder_wide": "Remembered answers cover the whole folder",
  "once_only": "This can only be allowed or denied once.",
  "network_once": "Network for a command that named no websites is asked every time: it can only be allowed or denied once.",
  "countdown_label": "Time left to answer",
  "countdown": "Denied automatically in %s unless you answer.",
  "time_up": "Time is up: the request is being denied.",
  "countdown_low_ms": 20000,
  "careful": "Careful: secrets — %s. Deny unless you are sure.",
  "pause_agents": "Pause agents",
  "resume_agents": "Resume agents",
  "paused_title": "Agents are paused.",
  "paused_banner": "Every call an agent makes is refused at once (recorded in Activity), and running commands were stopped.",
  "network": "Reach the internet from a command: it asks you first about each website the command names (you may allow one for good), or every time for a command that names none — or you turn network off for it.",
  "secrets": "Open your passwords, keys or browser profiles without a warning: Corral asks with “Careful: secrets”, Deny first, and never for a whole folder.",
  "off_limits": "See other people’s folders or Corral’s own files — never, not even if you click Allow.",
  "outside": "outside the agents’ folders"
};
