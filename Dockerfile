# rudder's container image: a static manager binary on distroless, run as non-root.
#   docker build -t rudder:latest .
# The charts and watches.yaml are embedded in the binary (by the Go file at the
# module root), so the final image holds nothing but /manager.

# Build on the builder's own platform and cross-compile for the target one.
FROM --platform=$BUILDPLATFORM golang:1.27 AS builder
ARG TARGETOS
ARG TARGETARCH

WORKDIR /workspace

# Dependencies first, in their own layer: it is rebuilt only when go.mod or
# go.sum change, not on every source edit.
COPY go.mod go.sum ./
RUN go mod download

# Only what the manager binary is built from. The root *.go file embeds
# watches.yaml and charts/, so both must be in the build context.
COPY *.go ./
COPY watches.yaml ./
COPY charts/ charts/
COPY cmd/ cmd/
COPY internal/ internal/

# Static (no cgo) so it runs on distroless/static; -trimpath and -s -w keep
# build paths and debug symbols out of the image.
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="-s -w" -o /manager ./cmd/manager

FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /manager /manager
# 65532 is distroless's "nonroot" user; numeric so that runAsNonRoot can verify it.
USER 65532:65532
ENTRYPOINT ["/manager"]
