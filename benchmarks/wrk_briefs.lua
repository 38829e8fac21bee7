-- wrk script for brief_intake: every request a new brief on the next tenant (the C load generator leaves the
-- cores to the stack; the suite's Python clients cost ~4 ms of CPU a request on the same 2 cores).
-- Arguments after "--": the tenants file (one "slug token" a line) and the run id. A thread's briefs are
-- "{run}-{thread}-{n}", so a second run with the same run id posts the same briefs again (duplicates).
local lanes = {"news", "dev", "build", "design", "marketing", "founders", "business"}
local threads = {}

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  tenants = {}
  for line in io.lines(args[1]) do
    local slug, token = line:match("^(%S+)%s+(%S+)$")
    table.insert(tenants, {slug = slug, auth = "Bearer " .. token})
  end
  run = args[2]
  counter, accepted, duplicates, other = 0, 0, 0, 0
end

function request()
  counter = counter + 1
  local tenant = tenants[(counter + tid) % #tenants + 1]
  local body = string.format(
    '{"brief_id":"%s-%d-%d","lane":"%s","title":"wrk brief %s %d %d","notes":"What changed."}',
    run, tid, counter, lanes[counter % #lanes + 1], run, tid, counter)
  return wrk.format("POST", "/api/tenants/" .. tenant.slug .. "/briefs",
    {["Authorization"] = tenant.auth, ["Content-Type"] = "application/json"}, body)
end

function response(status, headers, body)
  if status == 202 then
    accepted = accepted + 1
  elseif status == 200 then
    duplicates = duplicates + 1
  else
    other = other + 1
    if other <= 3 then io.stderr:write("wrk: HTTP " .. status .. " " .. body:sub(1, 300) .. "\n") end
  end
end

function done(summary, latency, requests)
  local a, d, o = 0, 0, 0
  for _, thread in ipairs(threads) do
    a = a + thread:get("accepted")
    d = d + thread:get("duplicates")
    o = o + thread:get("other")
  end
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"accepted":%d,"duplicates":%d,"other":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, a, d, o, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
