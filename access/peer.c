// SPDX-License-Identifier: MIT
/*
 * The two-node bootstrap channel: TCP, a token handshake, length-checked
 * messages, and nothing that waits past the run's deadline (peer.h).
 */
#include "access/peer.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include "core/clock.h"

/* A connection that sends nothing while we wait for its HELLO. */
#define HANDSHAKE_MS 10000

__attribute__((format(printf, 3, 4)))
static int fail(struct peer_conn *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return err;
}

/* Milliseconds left before the deadline (cap: an extra bound), >= 0. */
static int left_ms(const struct peer_conn *c, double cap_until)
{
	double until = c->deadline_ms, now = now_ms();

	if (cap_until > 0 && (until <= 0 || cap_until < until))
		until = cap_until;
	if (until <= 0)
		return -1;		/* poll: no limit */
	return until <= now ? 0 : (int)(until - now) + 1;
}

static int wait_fd(struct peer_conn *c, int fd, short ev, double cap_until)
{
	struct pollfd p = { .fd = fd, .events = ev };
	int n;

	for (;;) {
		n = poll(&p, 1, left_ms(c, cap_until));
		if (n > 0)
			return 0;
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static int io_all(struct peer_conn *c, void *buf, size_t len, bool out,
		  double cap_until)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n;
		int ret = wait_fd(c, c->fd, out ? POLLOUT : POLLIN, cap_until);

		if (ret)
			return ret;
		n = out ? send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT) :
			  recv(c->fd, p, len, MSG_DONTWAIT);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int peer_parse_endpoint(const char *s, char *host, size_t host_len,
			char *port, size_t port_len)
{
	const char *colon;
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	if (*s == '[') {			/* [v6]:port */
		const char *rb = strchr(s, ']');

		if (!rb || (size_t)(rb - s - 1) >= host_len)
			return -EINVAL;
		snprintf(host, host_len, "%.*s", (int)(rb - s - 1), s + 1);
		colon = rb[1] == ':' ? rb + 1 : NULL;
		if (rb[1] && !colon)
			return -EINVAL;
	} else {
		colon = strrchr(s, ':');
		if (colon && strchr(s, ':') != colon)
			return -EINVAL;		/* bare IPv6: use [..] */
		if ((size_t)(colon ? colon - s : (long)strlen(s)) >= host_len)
			return -EINVAL;
		snprintf(host, host_len, "%.*s",
			 (int)(colon ? colon - s : (long)strlen(s)), s);
		/* "PORT" alone (--listen 9000) is a port, not a host. */
		if (!colon && strspn(s, "0123456789") == strlen(s)) {
			host[0] = '\0';
			colon = s - 1;
		}
	}
	if (!colon) {
		snprintf(port, port_len, "%d", PEER_DEFAULT_PORT);
		return 0;
	}
	errno = 0;
	v = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || v < 1 || v > 65535)
		return -EINVAL;
	snprintf(port, port_len, "%ld", v);
	return 0;
}

static int send_msg(struct peer_conn *c, uint16_t type,
		    const struct peer_buf *b, double cap_until)
{
	uint8_t h[PEER_HDR_LEN];
	int ret;

	if (b->failed)
		return -EMSGSIZE;
	peer_hdr_encode(h, type, (uint32_t)b->len);
	ret = io_all(c, h, sizeof(h), true, cap_until);
	return ret ? ret : io_all(c, (void *)b->data, b->len, true, cap_until);
}

static int recv_msg(struct peer_conn *c, uint16_t *type, uint8_t *payload,
		    size_t *len, double cap_until)
{
	uint8_t h[PEER_HDR_LEN];
	struct peer_hdr hd;
	int ret;

	ret = io_all(c, h, sizeof(h), false, cap_until);
	if (ret)
		return ret;
	ret = peer_hdr_decode(h, sizeof(h), &hd);
	if (ret == -EPROTONOSUPPORT)
		return fail(c, -EPROTO, "the peer speaks protocol version %u, "
			    "this gdrcheck %u: run the same release on both",
			    hd.version, PEER_VERSION);
	if (ret)
		return fail(c, -EPROTO, "the peer sent no gdrcheck message "
			    "(%s): is another program on that port?",
			    strerror(-ret));
	ret = io_all(c, payload, hd.len, false, cap_until);
	if (ret)
		return ret;
	*type = hd.type;
	*len = hd.len;
	return 0;
}

int peer_send(struct peer_conn *c, uint16_t type, const struct peer_buf *b)
{
	int ret = send_msg(c, type, b, 0);

	if (ret && !c->err[0])
		fail(c, ret, "sending to %s: %s", c->addr, strerror(-ret));
	return ret;
}

int peer_recv(struct peer_conn *c, uint16_t *type, uint8_t *payload,
	      size_t *len)
{
	int ret = recv_msg(c, type, payload, len, 0);

	if (ret && !c->err[0])
		fail(c, ret, ret == -ETIMEDOUT ? "%s sent nothing before the "
		     "deadline%s" : "receiving from %s: %s", c->addr,
		     ret == -ETIMEDOUT ? "" : strerror(-ret));
	return ret;
}

/* A PEER_ERROR to the other side: best effort, it may be gone. */
static void tell(struct peer_conn *c, int code, const char *reason)
{
	static struct peer_buf b;
	struct peer_error e = { .code = code };

	snprintf(e.reason, sizeof(e.reason), "%s", reason);
	memset(&b, 0, sizeof(b));
	peer_error_encode(&e, &b);
	send_msg(c, PEER_ERROR, &b, now_ms() + 1000);
}

/* What the other side refused, when it sent a PEER_ERROR. */
static int refused(struct peer_conn *c, const uint8_t *p, size_t len)
{
	struct peer_error e;

	if (peer_error_decode(p, len, &e))
		return fail(c, -EPROTO, "the peer refused with a malformed "
			    "error message");
	return fail(c, e.code == -EACCES ? -EACCES : -ECONNREFUSED,
		    "the peer refused: %s", e.reason);
}

static void fill_nonce(uint8_t *n)
{
	if (getrandom(n, PEER_NONCE_LEN, 0) != PEER_NONCE_LEN) {
		/* No entropy: the clock still differs run to run. */
		double t = now_ms();

		memset(n, 0, PEER_NONCE_LEN);
		memcpy(n, &t, sizeof(t));
	}
}

/* The listener's side of the handshake on an accepted connection. */
static int serve_handshake(struct peer_conn *c, const char *token,
			   const char *my_host)
{
	static uint8_t payload[PEER_MAX_PAYLOAD];
	static struct peer_buf b;
	double until = now_ms() + HANDSHAKE_MS;
	struct peer_hello hello;
	struct peer_challenge ch;
	struct peer_proof pr;
	uint8_t want[PEER_MAC_LEN];
	uint16_t type;
	size_t len;
	int ret;

	ret = recv_msg(c, &type, payload, &len, until);
	if (ret)
		return ret;
	if (type != PEER_HELLO || peer_hello_decode(payload, len, &hello))
		return fail(c, -EPROTO, "%s did not start with a gdrcheck "
			    "hello", c->addr);
	if (hello.min_version > PEER_VERSION ||
	    hello.max_version < PEER_VERSION) {
		tell(c, -EPROTO, "protocol versions do not overlap");
		return fail(c, -EPROTO, "%s speaks protocol %u-%u, this "
			    "gdrcheck %u", c->addr, hello.min_version,
			    hello.max_version, PEER_VERSION);
	}
	snprintf(c->host, sizeof(c->host), "%s", hello.host);
	fill_nonce(ch.nonce);
	memset(&b, 0, sizeof(b));
	peer_challenge_encode(&ch, &b);
	ret = send_msg(c, PEER_CHALLENGE, &b, until);
	if (!ret)
		ret = recv_msg(c, &type, payload, &len, until);
	if (ret)
		return ret;
	if (type != PEER_PROOF || peer_proof_decode(payload, len, &pr))
		return fail(c, -EPROTO, "%s (%s) sent no token proof", c->addr,
			    c->host);
	peer_proof_compute(token, ch.nonce, hello.nonce, want);
	if (!peer_mac_equal(want, pr.mac)) {
		tell(c, -EACCES, "wrong token");
		return fail(c, -EACCES, "%s (%s) holds another token: refused",
			    c->addr, c->host);
	}
	/* Accepted: the connector learns our name from a HELLO back. */
	memset(&hello, 0, sizeof(hello));
	hello.min_version = hello.max_version = PEER_VERSION;
	snprintf(hello.host, sizeof(hello.host), "%s", my_host);
	memset(&b, 0, sizeof(b));
	peer_hello_encode(&hello, &b);
	return send_msg(c, PEER_HELLO, &b, until);
}

static void addr_text(const struct sockaddr *sa, socklen_t sl, char *out,
		      size_t len)
{
	char host[96], serv[NI_MAXSERV];

	if (getnameinfo(sa, sl, host,
			sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV))
		snprintf(out, len, "?");
	else
		snprintf(out, len, "%s:%s", host, serv);
}

static int open_listener(struct peer_conn *c, const char *endpoint)
{
	char host[256], port[16];
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE }, *ai = NULL;
	int fd = -1, one = 1, ret;

	if (peer_parse_endpoint(endpoint, host, sizeof(host), port,
				sizeof(port)))
		return fail(c, -EINVAL, "--listen '%s': expected [ADDR:]PORT",
			    endpoint);
	ret = getaddrinfo(*host ? host : NULL, port, &hints, &ai);
	if (ret)
		return fail(c, -EADDRNOTAVAIL, "--listen '%s': %s", endpoint,
			    gai_strerror(ret));
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 4)) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return fail(c, ret, "--listen '%s': %s", endpoint,
			    strerror(-ret));
	}
	freeaddrinfo(ai);
	return fd;
}

int peer_listen(struct peer_conn *c, const char *endpoint, const char *token,
		const char *my_host)
{
	int lfd, ret;

	c->fd = -1;
	c->err[0] = '\0';
	lfd = open_listener(c, endpoint);
	if (lfd < 0)
		return lfd;
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);

		ret = wait_fd(c, lfd, POLLIN, 0);
		if (ret == -ETIMEDOUT) {
			fail(c, ret, "no peer with the token connected to %s "
			     "before the deadline", endpoint);
			break;
		}
		if (ret) {
			fail(c, ret, "waiting on %s: %s", endpoint,
			     strerror(-ret));
			break;
		}
		c->fd = accept4(lfd, (struct sockaddr *)&ss, &sl,
				SOCK_CLOEXEC);
		if (c->fd < 0)
			continue;
		addr_text((const struct sockaddr *)&ss, sl, c->addr,
			  sizeof(c->addr));
		c->err[0] = '\0';
		ret = serve_handshake(c, token, my_host);
		if (!ret)
			break;
		/* Not our peer: tell the operator on stderr, wait on. */
		fprintf(stderr, "gdrcheck: %s\n", c->err[0] ? c->err :
			strerror(-ret));
		close(c->fd);
		c->fd = -1;
	}
	close(lfd);
	return ret;
}

static int connect_one(struct peer_conn *c, const struct addrinfo *a)
{
	int fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			0), err = 0, ret;
	socklen_t el = sizeof(err);

	if (fd < 0)
		return -errno;
	if (connect(fd, a->ai_addr, a->ai_addrlen) && errno != EINPROGRESS) {
		ret = -errno;
		close(fd);
		return ret;
	}
	ret = wait_fd(c, fd, POLLOUT, now_ms() + 2000);
	if (!ret && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el))
		ret = -errno;
	if (!ret && err)
		ret = -err;
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

/* The connector's side: HELLO, the challenge, the proof, HELLO back. */
static int ask_handshake(struct peer_conn *c, const char *token,
			 const char *my_host, const char *run_id)
{
	static uint8_t payload[PEER_MAX_PAYLOAD];
	static struct peer_buf b;
	struct peer_hello hello = { .min_version = PEER_VERSION,
				    .max_version = PEER_VERSION };
	struct peer_challenge ch;
	struct peer_proof pr;
	uint16_t type;
	size_t len;
	int ret;

	snprintf(hello.host, sizeof(hello.host), "%s", my_host);
	snprintf(hello.run_id, sizeof(hello.run_id), "%s", run_id ? run_id : "");
	fill_nonce(hello.nonce);
	memset(&b, 0, sizeof(b));
	peer_hello_encode(&hello, &b);
	ret = send_msg(c, PEER_HELLO, &b, 0);
	if (!ret)
		ret = recv_msg(c, &type, payload, &len, 0);
	if (ret)
		return ret;
	if (type == PEER_ERROR)
		return refused(c, payload, len);
	if (type != PEER_CHALLENGE || peer_challenge_decode(payload, len, &ch))
		return fail(c, -EPROTO, "%s answered without a challenge",
			    c->addr);
	peer_proof_compute(token, ch.nonce, hello.nonce, pr.mac);
	memset(&b, 0, sizeof(b));
	peer_proof_encode(&pr, &b);
	ret = send_msg(c, PEER_PROOF, &b, 0);
	if (!ret)
		ret = recv_msg(c, &type, payload, &len, 0);
	if (ret == -ECONNRESET)
		return fail(c, -EACCES, "%s closed the connection after the "
			    "token proof: wrong token?", c->addr);
	if (ret)
		return ret;
	if (type == PEER_ERROR)
		return refused(c, payload, len);
	if (type != PEER_HELLO || peer_hello_decode(payload, len, &hello))
		return fail(c, -EPROTO, "%s did not accept with a hello",
			    c->addr);
	snprintf(c->host, sizeof(c->host), "%s", hello.host);
	return 0;
}

int peer_connect(struct peer_conn *c, const char *endpoint, const char *token,
		 const char *my_host, const char *run_id)
{
	char host[256], port[16];
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int ret, last = -ECONNREFUSED;
	/* Without a deadline, retrying a refused connection stops here. */
	double give_up = now_ms() + 30000;

	c->fd = -1;
	c->err[0] = '\0';
	if (peer_parse_endpoint(endpoint, host, sizeof(host), port,
				sizeof(port)) || !*host)
		return fail(c, -EINVAL, "--peer '%s': expected HOST[:PORT]",
			    endpoint);
	ret = getaddrinfo(host, port, &hints, &ai);
	if (ret)
		return fail(c, -EHOSTUNREACH, "--peer '%s': %s", endpoint,
			    gai_strerror(ret));
	/* The listener may start a moment later: retry until the deadline. */
	while (c->fd < 0) {
		for (const struct addrinfo *a = ai; a && c->fd < 0;
		     a = a->ai_next) {
			ret = connect_one(c, a);
			if (ret >= 0) {
				c->fd = ret;
				addr_text(a->ai_addr, a->ai_addrlen, c->addr,
					  sizeof(c->addr));
			} else {
				last = ret;
			}
		}
		if (c->fd >= 0 || left_ms(c, give_up) == 0)
			break;
		usleep(200 * 1000);
	}
	freeaddrinfo(ai);
	if (c->fd < 0)
		return fail(c, last, "--peer %s: %s (until the deadline)",
			    endpoint, strerror(-last));
	ret = ask_handshake(c, token, my_host, run_id);
	if (ret && !c->err[0])
		fail(c, ret, "handshake with %s: %s", c->addr, strerror(-ret));
	if (ret) {
		close(c->fd);
		c->fd = -1;
	}
	return ret;
}

void peer_close(struct peer_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
