vcl 4.1;
# Varnish 7.1 in front of Pressroom's public site server, with surrogate-key
# purges through the xkey vmod.
#
# A template: tenant_runtime.edge.varnish.render_vcl() (and the Helm chart,
# which ships a byte-identical copy in helm/pressroom/files/varnish.vcl)
# substitutes the dollar-brace placeholders before varnishd compiles it.
#
# Objects are tagged by the backend's `xkey` response header (`acme
# acme:doc:about`), which the vmod indexes natively. Pressroom's HttpPurger
# sends `PURGE <any path>` with `xkey-purge: tag1 tag2`; xkey.purge() takes
# that space-separated list as is and returns how many objects it dropped.

import xkey;

backend site {
    .host = "${BACKEND_HOST}";
    .port = "${BACKEND_PORT}";
    .connect_timeout = 2s;
    .first_byte_timeout = 30s;
    .between_bytes_timeout = 10s;
}

acl purgers {
${PURGE_ACL}
}

sub vcl_recv {
    if (req.method == "PURGE") {
        if (client.ip !~ purgers) {
            return (synth(403, "Forbidden"));
        }
        # An empty secret disables the check; the placeholder is substituted
        # in both operands so one template serves both cases.
        if ("${PURGE_SECRET}" != "" && req.http.x-purge-secret != "${PURGE_SECRET}") {
            return (synth(403, "Forbidden"));
        }
        if (!req.http.xkey-purge) {
            return (synth(400, "Bad Request"));
        }
        set req.http.x-purged = xkey.purge(req.http.xkey-purge);
        return (synth(200, "Purged"));
    }
    if (req.method != "GET" && req.method != "HEAD") {
        return (pass);
    }
    # The public site is the same for everyone and reads no cookies; keeping
    # them would make every browser's request a pass in the built-in VCL.
    unset req.http.Cookie;
    return (hash);
}

sub vcl_backend_response {
    # Only tagged successful pages are cached: a tag is the only way a publish
    # can reach a cached object, and a 404 may be published a moment later
    # (the site server's own cache follows the same rule).
    if (beresp.status != 200 || !beresp.http.xkey) {
        set beresp.uncacheable = true;
        set beresp.ttl = 0s;
        return (deliver);
    }
    # The backend sends `max-age=0, must-revalidate` for browsers; here the
    # object lives until a purge drops it, with a TTL only as a safety net.
    set beresp.ttl = ${DEFAULT_TTL};
    set beresp.grace = 1m;
}

sub vcl_deliver {
    if (obj.hits > 0) {
        set resp.http.x-cache = "HIT";
    } else {
        set resp.http.x-cache = "MISS";
    }
    set resp.http.x-cache-hits = obj.hits;
}

sub vcl_synth {
    if (req.method == "PURGE") {
        set resp.http.content-type = "application/json";
        if (resp.status == 200) {
            set resp.http.x-purged = req.http.x-purged;
            synthetic({"{"purged": "} + req.http.x-purged + "}");
        } elsif (resp.status == 403) {
            synthetic({"{"error": {"code": "forbidden", "message": "Purges are accepted from the purger ACL with the purge secret only.", "details": {}}}"});
        } else {
            synthetic({"{"error": {"code": "bad_request", "message": "PURGE needs an xkey-purge header listing the tags.", "details": {}}}"});
        }
        return (deliver);
    }
}
