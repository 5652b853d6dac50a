-- growth-watch: processes whose memory grows faster than a rate for N ticks, such as leaking agents
--
-- Usage: procwalk watch growth-watch --interval 30s [-- rate=200MiB ticks=3 min=256MiB kill=1]
--        procwalk run growth-watch --interval 10s     (one report of current growth)
--   rate=SIZE  growth per minute that counts as a leak (default 200MiB)
--   ticks=N    consecutive ticks above the rate before alerting (default 3;
--              procwalk run reports after one measurement)
--   min=SIZE   ignore processes smaller than this (default 256MiB)
--   kill=1     also terminate a process once it alerts (TERM, then KILL
--              after grace=SEC, default 10)
-- Growth is measured between two scans (--interval apart), in RSS, or PSS
-- with --pss. The first tick of a watch has nothing to compare with.

local pw = require "procwalk"

local rate, err = pw.parse_bytes(pw.args.rate or "200MiB")
if not rate then error("rate: " .. err) end
local min, merr = pw.parse_bytes(pw.args.min or "256MiB")
if not min then error("min: " .. merr) end
local ticks = tonumber(pw.args.ticks or (pw.mode == "run" and "1" or "3"))
if not ticks or ticks < 1 or ticks % 1 ~= 0 then error("ticks must be a whole number >= 1, got " .. tostring(pw.args.ticks)) end
local kill = pw.args.kill == "1" or pw.args.kill == "true"
local grace = tonumber(pw.args.grace or "10")
if not grace or grace <= 0 then error("grace must be seconds > 0, got " .. tostring(pw.args.grace)) end

-- where names the session a process runs in: its agent, else its tmux
-- session, else its pod or unit.
local function where(p)
  for _, kind in ipairs { "agent", "tmux", "cgroup" } do
    local s = p:session(kind)
    if s then return s end
  end
end

pw.state.alerted = pw.state.alerted or {}
local alerted, seen = pw.state.alerted, {}
local growers = {}
for _, p in ipairs(pw.processes { kernel = false }) do
  local growth = p.pss_growth or p.growth
  local size = p.pss or p.rss
  if growth and size >= min then
    local fast = growth > rate
    if pw.debounce("growth-watch " .. p.id, fast, ticks) then
      growers[#growers + 1] = { p = p, growth = growth, size = size }
    end
  end
end
table.sort(growers, function(a, b) return a.growth > b.growth end)

if pw.mode == "run" then
  print(pw.wrap(string.format("growth-watch: %d %s of at least %s growing faster than %s/min",
    #growers, #growers == 1 and "process" or "processes", pw.bytes(min), pw.bytes(rate)), 80, "  "))
end
for _, g in ipairs(growers) do
  local p, s = g.p, where(g.p)
  seen[p.id] = true
  local msg = string.format("%s %d grows %s/min, now %s%s", pw.printable(p.comm), p.pid, pw.bytes(g.growth), pw.bytes(g.size),
    s and " in " .. pw.printable(s.ref) or "")
  if pw.mode == "run" then print(pw.wrap("  " .. msg, 80, "    ")) end -- fits 80 columns
  if not alerted[p.id] then -- once per process while it keeps growing
    alerted[p.id] = true
    pw.alert { message = "growth-watch: " .. msg, session = s, process = p, value = g.growth, threshold = rate }
    if kill then
      local report, kerr = p:kill { grace = grace }
      if not report then
        pw.log("growth-watch: cannot kill", p.comm, p.pid, kerr)
      else
        pw.log("growth-watch:", report.dry_run and "would kill" or report.outcomes[1].result, p.comm, p.pid)
      end
    end
  end
end
-- Forget processes that stopped growing (or exited), so they alert again.
for id in pairs(alerted) do
  if not seen[id] then alerted[id] = nil end
end
