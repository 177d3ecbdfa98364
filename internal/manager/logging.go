package manager

import (
	"fmt"
	"strconv"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// newLogger builds the manager's logger from a level and a format.
func newLogger(level, format string) (logr.Logger, error) {
	opts := zap.Options{}
	switch level {
	case "debug":
		opts.Level = zapcore.DebugLevel
	case "info":
		opts.Level = zapcore.InfoLevel
	case "error":
		opts.Level = zapcore.ErrorLevel
	default:
		v, err := strconv.Atoi(level)
		if err != nil || v < 0 {
			return logr.Logger{}, fmt.Errorf("--log-level %q: use debug, info, error or a verbosity number such as 2", level)
		}
		opts.Level = zapcore.Level(-v)
	}
	switch format {
	case "json":
		opts.Encoder = zapcore.NewJSONEncoder(zapcore.EncoderConfig{
			TimeKey: "ts", LevelKey: "level", NameKey: "logger", MessageKey: "msg", StacktraceKey: "stacktrace",
			EncodeTime: zapcore.ISO8601TimeEncoder, EncodeLevel: zapcore.LowercaseLevelEncoder, EncodeDuration: zapcore.StringDurationEncoder,
		})
	case "console":
		opts.Development = true
	default:
		return logr.Logger{}, fmt.Errorf("--log-format %q: use json or console", format)
	}
	return zap.New(zap.UseFlagOptions(&opts)), nil
}

// bodyMessages are client-go's log lines that carry whole request and
// response bodies (at verbosity 9 and up): a Secret's data, passwords
// included, would be in them.
var bodyMessages = map[string]bool{"Request Body": true, "Response Body": true}

// withoutBodies returns log without client-go's body lines, at every level:
// no verbosity may put a Secret in rudder's log.
func withoutBodies(log logr.Logger) logr.Logger {
	if log.GetSink() == nil {
		return log
	}
	return logr.New(bodyFilter{log.GetSink()})
}

// bodyFilter is a logr.LogSink dropping bodyMessages.
type bodyFilter struct{ logr.LogSink }

func (f bodyFilter) Info(level int, msg string, kv ...any) {
	if !bodyMessages[msg] {
		f.LogSink.Info(level, msg, kv...)
	}
}

func (f bodyFilter) WithValues(kv ...any) logr.LogSink {
	return bodyFilter{f.LogSink.WithValues(kv...)}
}

func (f bodyFilter) WithName(name string) logr.LogSink { return bodyFilter{f.LogSink.WithName(name)} }

// WithCallDepth keeps call sites right through the filter.
func (f bodyFilter) WithCallDepth(depth int) logr.LogSink {
	if d, ok := f.LogSink.(logr.CallDepthLogSink); ok {
		return bodyFilter{d.WithCallDepth(depth + 1)}
	}
	return f
}
