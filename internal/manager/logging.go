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
