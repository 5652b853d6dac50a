-- memory-guard: kill the biggest process of a tmux or agent session whose memory stays over a limit for N ticks
--
-- Usage: procwalk watch memory-guard --interval 10s [--dry-run] [-- limit=4GiB ticks=3 ...]
--   limit=SIZE   a session's memory limit (default 4GiB): PSS when read
--                (--pss), RSS otherwise
--   ticks=N      how many consecutive ticks over the limit before acting
--                (default 3); after a kill the count starts again, so the
--                next victim is chosen only if memory stays high
--   for=DURATION instead of ticks: how long memory must stay over the limit
--                before acting, whatever the interval ("5m", "90s")
--   kinds=LIST   session kinds to guard, comma-separated (default tmux,agent)
--   session=REF  guard only this session, e.g. tmux:build
--   signal=SIG   first signal (default TERM; KILL after the grace)
--   grace=SEC    seconds between the first signal and KILL (default 10)
-- Kills go through procwalk's verified terminate: protected processes (sshd,
-- the tmux server, procwalk's own ancestors ...) are skipped, and --dry-run
-- only reports what would be killed.

local pw = require "procwalk"

local limit, err = pw.parse_bytes(pw.args.limit or "4GiB")
if not limit then error("limit: " .. err) end
local ticks = tonumber(pw.args.ticks or "3")
if not ticks or ticks < 1 or ticks % 1 ~= 0 then error("ticks must be a whole number >= 1, got " .. tostring(pw.args.ticks)) end
local hold = pw.args["for"] -- a duration, checked by pw.debounce
local held = hold or (ticks .. " ticks")
local grace = tonumber(pw.args.grace or "10")
if not grace or grace <= 0 then error("grace must be seconds > 0, got " .. tostring(pw.args.grace)) end
local signal = pw.args.signal or "TERM"

local kinds = {}
for kind in (pw.args.kinds or "tmux,agent"):gmatch("[^,%s]+") do kinds[kind] = true end

local sessions, serr
if pw.args.session then
  local s
  s, serr = pw.session(pw.args.session)
  sessions = { s }
else
  sessions, serr = pw.sessions()
end
if serr then
  pw.log("memory-guard: nothing guarded: " .. serr)
  return
end
if not sessions or #sessions == 0 then
  return -- no sessions at all (no tmux server, say): nothing to guard, nothing to say
end

-- Sessions overlap (an agent inside a tmux session): one kill per process.
local killed = {}

-- kill_biggest terminates the biggest member that is not protected.
local function kill_biggest(s, metric, used)
  for _, victim in ipairs(s:top(metric, 5)) do
    if killed[victim.id] then return end -- another session's kill covers this one
    local report, kerr = victim:kill { signal = signal, grace = grace }
    if not report then
      pw.alert { level = "critical", message = "memory-guard could not kill " .. victim.comm .. ": " .. kerr,
        session = s, process = victim, value = used, threshold = limit }
      return
    end
    local o = report.outcomes[1]
    if o and o.refused then
      pw.log(string.format("memory-guard: %s: skipping %s %d: %s", s.ref, victim.comm, victim.pid, o.error or o.result))
    else
      killed[victim.id] = true
      local verb = report.dry_run and "would kill" or (o and o.result or "killed")
      pw.alert { level = report.ok and "warning" or "critical",
        message = string.format("memory-guard: %s used %s for %s (limit %s): %s %s %d (%s)",
          s.ref, pw.bytes(used), held, pw.bytes(limit), verb, victim.comm, victim.pid, pw.bytes(victim[metric])),
        session = s, process = victim, value = used, threshold = limit, result = o and o.result or "none",
        dry_run = report.dry_run }
      return
    end
  end
  pw.alert { level = "critical", message = "memory-guard: " .. s.ref .. " is over its limit but every big member is protected",
    session = s, value = used, threshold = limit }
end

for _, s in ipairs(sessions) do
  if pw.args.session or kinds[s.kind] then
    local metric = s.pss and "pss" or "rss"
    local used = s[metric]
    local key = "memory-guard " .. s.ref
    local over = used > limit
    if pw.debounce(key, over, hold or ticks) then
      kill_biggest(s, metric, used)
      pw.debounce(key, false, 1) -- count again: act next only if memory stays high
    elseif over then
      pw.log(string.format("memory-guard: %s uses %s %s, over the %s limit; acting after %s over it",
        s.ref, pw.bytes(used), metric, pw.bytes(limit), held))
    end
    if pw.mode == "run" then -- fits 80 columns: a long ref on a line of its own
      local ref = pw.printable(s.ref)
      if pw.width(ref) > 40 then
        print(pw.wrap(ref, 80, "  "))
        ref = ""
      end
      print(string.format("%s %11s %s of %s%s", pw.pad(ref, 40), pw.bytes(used), metric, pw.bytes(limit), over and "  OVER" or ""))
    end
  end
end
