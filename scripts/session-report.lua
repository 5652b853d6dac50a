-- session-report: every session by kind, with its members' memory, CPU, age and biggest processes
--
-- Usage: procwalk run session-report [-- kind=KIND top=N]
--   kind=KIND  only this kind (tmux, agent, cgroup, user, tree, group, sid,
--              pgrp, tty); kind=all shows every kind. Default: tmux, agent,
--              cgroup, user, tree and group (sid, pgrp and tty repeat them).
--   top=N      list the N biggest members of each session (default 3, 0: none)
-- The report is printed, so it goes to stdout (procwalk run session-report > r.txt).

local pw = require "procwalk"

local top = tonumber(pw.args.top or "3")
if not top or top < 0 then error("top must be a number >= 0, got " .. tostring(pw.args.top)) end

local kinds = { tmux = true, agent = true, cgroup = true, user = true, tree = true, group = true }
if pw.args.kind == "all" then
  kinds = nil
elseif pw.args.kind then
  kinds = { [pw.args.kind] = true }
end

local function bytes(n) return n and pw.bytes(n) or "-" end
local function percent(n) return n and string.format("%.1f%%", n) or "-" end

-- notes says what a session's kind knows best about it.
local function notes(s)
  local a, out = s.attrs, {}
  if a.tmux_target then out[#out + 1] = a.tmux_target end
  if a.project and s.kind == "agent" then out[#out + 1] = "project " .. a.project end
  if a.pod then out[#out + 1] = "pod " .. (a.namespace and a.namespace .. "/" or "") .. a.pod end
  if a.unit and s.kind == "cgroup" and a.unit ~= s.name then out[#out + 1] = a.unit end
  if s.memory_limit_bytes then
    out[#out + 1] = string.format("memory %.0f%% of %s", s.memory_usage_percent or 0, pw.bytes(s.memory_limit_bytes))
  end
  if s.cpu_quota_cores then out[#out + 1] = string.format("cpu quota %.2g", s.cpu_quota_cores) end
  if s.danger then out[#out + 1] = "NEAR LIMIT" end
  if s.zombies > 0 then out[#out + 1] = s.zombies .. (s.zombies == 1 and " zombie" or " zombies") end
  return pw.printable(table.concat(out, ", ")) -- names: a tab or line break in one must not break the row
end

local snap = pw.snapshot()
print(string.format("procwalk session report: %s, %d processes, %d CPUs, %s memory",
  pw.hostname(), snap.procs, snap.cpus, pw.bytes(snap.mem_total)))
if snap.partial then
  local why = {}
  if snap.gone > 0 then why[#why + 1] = snap.gone .. " gone mid-scan" end
  for field, n in pairs(snap.denied) do why[#why + 1] = n .. " without " .. field .. " (permission)" end
  if snap.hidepid ~= "" then why[#why + 1] = "hidepid=" .. snap.hidepid end
  table.sort(why)
  print("partial data: " .. table.concat(why, ", "))
end

local sessions, err = pw.sessions()
if not sessions then error("cannot group sessions: " .. err) end

-- Sessions come grouped by kind; print one section per kind.
local order, by_kind = {}, {}
for _, s in ipairs(sessions) do
  if not kinds or kinds[s.kind] then
    if not by_kind[s.kind] then
      by_kind[s.kind] = {}
      order[#order + 1] = s.kind
    end
    table.insert(by_kind[s.kind], s)
  end
end
if #order == 0 then
  print("\nno sessions" .. (pw.args.kind and " of kind " .. pw.args.kind or ""))
  return
end

-- The report fits 80 columns: a row of figures per session, its name on
-- a line of its own when longer than the column (24), then its notes and
-- biggest members on lines of their own, wrapped.
for _, kind in ipairs(order) do
  local list = by_kind[kind]
  local width = #"SESSION"
  for _, s in ipairs(list) do width = math.min(math.max(width, pw.width(pw.printable(s.name))), 24) end
  local row = "  %s %6s %10s %10s %6s  %s" -- the name padded by its cells (pw.pad)
  print(string.format("\n%s: %d %s", kind, #list, #list == 1 and "session" or "sessions"))
  print(string.format(row, pw.pad("SESSION", width), "PROCS", "RSS", "PSS", "CPU", "AGE"))
  for _, s in ipairs(list) do
    local name = pw.printable(s.name)
    if pw.width(name) > width then
      print(pw.wrap("  " .. name, 80, "    "))
      name = ""
    end
    print(pw.wrap(string.format(row, pw.pad(name, width), s.procs, bytes(s.rss), bytes(s.pss), percent(s.cpu),
      s.age and pw.duration(s.age) or "-"), 80, "    "))
    local note = notes(s)
    if note ~= "" then print(pw.wrap("    " .. note, 80, "    ")) end
    if top > 0 then
      local biggest = {}
      for _, p in ipairs(s:top(s.pss and "pss" or "rss", top)) do
        if (p.pss or p.rss) > 0 then -- not zombies
          biggest[#biggest + 1] = string.format("%s %d %s", pw.printable(p.comm), p.pid, pw.bytes(p.pss or p.rss))
        end
      end
      if #biggest > 0 then print(pw.wrap("    biggest: " .. table.concat(biggest, ", "), 80, "      ")) end
    end
  end
end
