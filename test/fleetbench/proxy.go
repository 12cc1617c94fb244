package main

import (
	"context"
	"net"
	"sync/atomic"
	"time"
)

// delayProxy forwards TCP connections to an API server, holding every chunk it forwards for
// the current delay each way, as a network path of that round trip would. Chunks keep their
// order and are not held back by one another: a chunk read at t is written at t+delay.
type delayProxy struct {
	net.Listener
}

func newDelayProxy(ctx context.Context, target string, delay *atomic.Int64) (*delayProxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				up, err := (&net.Dialer{}).DialContext(ctx, "tcp", target)
				if err != nil {
					_ = c.Close()
					return
				}
				go pipe(up, c, delay)
				pipe(c, up, delay)
			}()
		}
	}()
	return &delayProxy{l}, nil
}

type chunk struct {
	at   time.Time
	data []byte
}

// pipe copies from src to dst, each chunk delayed; it closes both when either side ends.
func pipe(dst, src net.Conn, delay *atomic.Int64) {
	chunks := make(chan chunk, 1024)
	go func() {
		defer close(chunks)
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				chunks <- chunk{time.Now().Add(time.Duration(delay.Load())), append([]byte(nil), buf[:n]...)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range chunks {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.data); err != nil {
			break
		}
	}
	_ = dst.Close()
	_ = src.Close()
	// Drain, so a reader blocked on a full channel sees the closed connection and ends.
	for range chunks {
		continue
	}
}
