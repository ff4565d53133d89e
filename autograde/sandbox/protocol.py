"""The wire between the grader and a student's sandbox: JSON lines, plain data, handles for everything else.

This file is copied into every sandbox, where it runs beside the student's
code, so it imports nothing from the course but the standard library and
numpy. The grader imports it too: both ends of the pipe speak through the
same :class:`Channel`.

What crosses the pipe:

- **plain data by value**: ``None``, bools, ints, floats (NaN and infinities
  tagged), exact fractions (``fractions.Fraction``, as two ints), strings,
  lists, tuples, dicts, numpy scalars and numeric arrays
  (dtype and shape kept, so a check can still tell an ``int`` from a
  ``np.float64``), and dataclass instances of ``infer_lib`` whose fields are
  themselves plain (a ``Request``, a ``ModelConfig``); a copy remembers where
  it came from, so an object sent back arrives as the original (a check can
  ask ``victim is request``);
- **everything else by handle**: the receiver gets a :class:`RemoteObject`
  whose calls and attribute reads travel back to the owner. The student's
  functions are handles on the grader's side; the grader's instrumented model
  is a handle inside the sandbox, so the model's call log is written by the
  grader, never by the student's process;
- **exceptions** by the name of their nearest built-in class and message; an
  exception that the other side raised comes back as that very object.

A message is one JSON object per line, at most :data:`MAX_MESSAGE_BYTES`.
Calls nest: while one side waits for its answer it serves the other side's
requests, so student code may call the grader's model while the grader waits
for the student's ``generate``.
"""

from __future__ import annotations

import base64
import builtins
import dataclasses
import enum
import importlib
import json
import math
import os
import select
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

MAX_MESSAGE_BYTES = 8 * 1024 * 1024
"""Largest message either side accepts; a larger one ends the sandbox."""
MAX_DEPTH = 64
"""Deepest nesting of containers encoded by value."""
BY_VALUE_MODULE = "infer_lib."
"""Dataclasses from this package travel by value when their fields are plain."""


class ProtocolError(Exception):
    """The other side broke the protocol: bad JSON, an unknown message, a message over the size limit."""


class ChannelClosed(ProtocolError):
    """The other side's end of the pipe closed (the sandbox died)."""


class ChannelTimeout(ProtocolError):
    """No answer before the deadline."""


class RemoteError(Exception):
    """An exception from the other side whose class has no built-in counterpart here."""


class RemoteBaseError(BaseException):
    """A BaseException from the other side that is not an Exception (the model's call limit, an exit)."""


def _builtin_exception(error: BaseException) -> type[BaseException]:
    """The nearest built-in exception class in ``error``'s class hierarchy."""
    for klass in type(error).__mro__:
        if getattr(builtins, klass.__name__, None) is klass:
            return klass
    return Exception


class RemoteObject:
    """Stands for an object that lives on the other side of a :class:`Channel`."""

    __slots__ = ("_channel", "_handle", "_type_name")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return _remote_getattr(self, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _remote_call(self, args, kwargs)

    def __bool__(self) -> bool:
        # Like any object without __len__: `if clock:` must not cost a remote call.
        return True

    def __len__(self) -> int:
        return _remote_call(self, (), {}, method="__len__")  # type: ignore[no-any-return]

    def __getitem__(self, key: Any) -> Any:
        return _remote_call(self, (key,), {}, method="__getitem__")

    def __repr__(self) -> str:
        return f"<remote {object.__getattribute__(self, '_type_name')}>"


def _remote_getattr(proxy: RemoteObject, name: str) -> Any:
    channel = object.__getattribute__(proxy, "_channel")
    return channel.request({"op": "getattr", "h": object.__getattribute__(proxy, "_handle"), "name": name})


def _remote_call(proxy: RemoteObject, args: tuple[Any, ...], kwargs: dict[str, Any], method: str = "") -> Any:
    channel = object.__getattribute__(proxy, "_channel")
    message = {
        "op": "call",
        "h": object.__getattribute__(proxy, "_handle"),
        "method": method,
        "args": channel.encode(tuple(args)),
        "kwargs": channel.encode(dict(kwargs)),
    }
    return channel.request(message)


class Channel:
    """One end of the pipe: encodes, decodes, sends, waits, and serves the other end's requests.

    ``exportable(obj)`` says whether a local object may be handed out by
    handle, and ``readable(obj, name, value)`` whether the other side may
    read ``obj.name`` (the grader allows only its model's few methods and
    plain data); ``handlers`` adds side-specific operations (``run_cell``).
    """

    def __init__(
        self,
        read_fd: int,
        write_fd: int,
        *,
        exportable: Callable[[Any], bool] = lambda obj: True,
        readable: Callable[[Any, str, Any], bool] = lambda obj, name, value: True,
        handlers: dict[str, Callable[[dict[str, Any]], Any]] | None = None,
        capture: Callable[[], Any] | None = None,
    ) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.exportable = exportable
        self.readable = readable
        self.handlers = dict(handlers or {})
        self.capture = capture
        self.deadline: float | None = None
        self._buffer = b""
        self._exported: dict[int, Any] = {}
        self._exported_ids: dict[int, int] = {}
        self._copies: dict[int, tuple[Any, int]] = {}
        self._proxies: dict[int, RemoteObject] = {}
        self._raised: dict[int, BaseException] = {}
        self._next_handle = 1
        self._next_id = 1
        self.proxy_classes: dict[str, type[RemoteObject]] = {}

    # ------------------------------------------------------------------ encoding

    def export(self, obj: Any) -> int:
        """The handle of a local object, creating it on first use."""
        key = id(obj)
        if key in self._exported_ids:
            return self._exported_ids[key]
        if not self.exportable(obj):
            raise TypeError(f"a {type(obj).__name__} cannot be handed to the other side")
        handle = self._next_handle
        self._next_handle += 1
        self._exported[handle] = obj
        self._exported_ids[key] = handle
        return handle

    def encode(self, value: Any, depth: int = 0) -> Any:
        """Plain JSON for ``value`` (see the module docstring)."""
        if depth > MAX_DEPTH:
            raise ValueError("data nested too deeply to send")
        if value is None or isinstance(value, str) or type(value) is bool or type(value) is int:
            return value
        if type(value) is float:
            return value if math.isfinite(value) else {"$float": repr(value)}
        if isinstance(value, RemoteObject):
            return {"$ref": object.__getattribute__(value, "_handle")}
        if id(value) in self._copies and self._copies[id(value)][0] is value:
            return {"$ref": self._copies[id(value)][1]}
        if type(value) is list:
            return [self.encode(item, depth + 1) for item in value]
        if type(value) is tuple:
            return {"$tuple": [self.encode(item, depth + 1) for item in value]}
        if type(value) is dict:
            return {"$dict": [[self.encode(k, depth + 1), self.encode(v, depth + 1)] for k, v in value.items()]}
        if isinstance(value, np.generic) and type(value) in _NUMPY_SCALARS:
            return {"$np": value.dtype.str, "v": self.encode(value.item(), depth + 1)}
        if type(value) is Fraction:
            return {"$frac": [value.numerator, value.denominator]}
        if type(value) is np.ndarray and value.dtype.kind in "biuf":
            data = base64.b64encode(np.ascontiguousarray(value).tobytes()).decode("ascii")
            return {"$nd": value.dtype.str, "shape": list(value.shape), "b64": data}
        if isinstance(value, enum.Enum) and type(value).__module__.startswith(BY_VALUE_MODULE):
            klass = type(value)
            return {"$enum": f"{klass.__module__}:{klass.__qualname__}", "v": self.encode(value.value, depth + 1)}
        if _is_plain_dataclass(value):
            try:
                fields = {f.name: self._encode_plain(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)}
            except _NotPlain:
                pass
            else:
                klass = type(value)
                return {"$dc": f"{klass.__module__}:{klass.__qualname__}", "fields": fields, "h": self.export(value)}
        handle = self.export(value)
        bases = [f"{k.__module__}:{k.__qualname__}" for k in type(value).__mro__ if k.__module__.startswith("infer_lib")]
        return {"$h": handle, "type": type(value).__name__, "bases": bases}

    def _encode_plain(self, value: Any, depth: int) -> Any:
        """Like :meth:`encode` but refuses handles and arrays (for by-value dataclass fields)."""
        if depth > MAX_DEPTH:
            raise _NotPlain
        if value is None or isinstance(value, str) or type(value) in (bool, int, float):
            return self.encode(value, depth)
        if isinstance(value, enum.Enum) and type(value).__module__.startswith(BY_VALUE_MODULE):
            return self.encode(value, depth)
        if type(value) in (list, tuple):
            items = [self._encode_plain(item, depth + 1) for item in value]
            return items if type(value) is list else {"$tuple": items}
        if type(value) is dict:
            return {"$dict": [[self._encode_plain(k, depth + 1), self._encode_plain(v, depth + 1)] for k, v in value.items()]}
        if (isinstance(value, np.generic) and type(value) in _NUMPY_SCALARS) or type(value) is Fraction:
            return self.encode(value, depth)
        raise _NotPlain

    def decode(self, data: Any, depth: int = 0) -> Any:
        """The value that ``data`` (made by the other side's :meth:`encode`) stands for."""
        if depth > MAX_DEPTH:
            raise ProtocolError("data nested too deeply")
        if data is None or isinstance(data, (str, bool, int, float)):
            return data
        if isinstance(data, list):
            return [self.decode(item, depth + 1) for item in data]
        if not isinstance(data, dict) or len(data) == 0:
            raise ProtocolError(f"cannot decode {type(data).__name__}")
        if "$float" in data:
            text = data["$float"]
            if text not in ("nan", "inf", "-inf"):
                raise ProtocolError("bad float")
            return float(text)
        if "$tuple" in data:
            return tuple(self.decode(item, depth + 1) for item in _list(data["$tuple"]))
        if "$dict" in data:
            return {self.decode(k, depth + 1): self.decode(v, depth + 1) for k, v in _pairs(data["$dict"])}
        if "$frac" in data:
            parts = _list(data["$frac"])
            if len(parts) != 2 or any(type(part) is not int for part in parts) or parts[1] <= 0:
                raise ProtocolError("bad fraction")
            return Fraction(parts[0], parts[1])
        if "$np" in data:
            dtype = np.dtype(_str(data["$np"]))
            if dtype.kind not in "biuf":
                raise ProtocolError("bad numpy scalar")
            return dtype.type(self.decode(data["v"], depth + 1))
        if "$nd" in data:
            dtype = np.dtype(_str(data["$nd"]))
            shape = tuple(int(n) for n in _list(data["shape"]))
            if dtype.kind not in "biuf" or any(n < 0 for n in shape):
                raise ProtocolError("bad array")
            raw = base64.b64decode(_str(data["b64"]), validate=True)
            return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
        if "$ref" in data:
            handle = int(data["$ref"])
            if handle not in self._exported:
                raise ProtocolError("reference to an unknown object")
            return self._exported[handle]
        if "$dc" in data:
            return self._decode_dataclass(data, depth)
        if "$enum" in data:
            klass = _course_class(_str(data["$enum"]))
            if not issubclass(klass, enum.Enum):
                raise ProtocolError(f"{klass.__name__} is not an enum")
            try:
                return klass(self.decode(data["v"], depth + 1))
            except ValueError:
                raise ProtocolError(f"not a member of {klass.__name__}") from None
        if "$h" in data:
            return self._proxy(int(data["$h"]), _str(data.get("type", "object")), _list(data.get("bases", [])))
        raise ProtocolError("unknown tag")

    def _decode_dataclass(self, data: dict[str, Any], depth: int) -> Any:
        klass = _course_class(_str(data["$dc"]))
        if not dataclasses.is_dataclass(klass):
            raise ProtocolError(f"{klass.__name__} is not a dataclass")
        fields = data["fields"]
        if not isinstance(fields, dict) or set(fields) != {f.name for f in dataclasses.fields(klass)}:
            raise ProtocolError(f"wrong fields for {klass.__name__}")
        copy = object.__new__(klass)
        for name, value in fields.items():
            object.__setattr__(copy, name, self.decode(value, depth + 1))
        self._copies[id(copy)] = (copy, int(data["h"]))
        return copy

    def _proxy(self, handle: int, type_name: str, bases: list[Any]) -> RemoteObject:
        if handle in self._proxies:
            return self._proxies[handle]
        klass = self._proxy_class(type_name, tuple(_str(b) for b in bases))
        proxy = object.__new__(klass)
        object.__setattr__(proxy, "_channel", self)
        object.__setattr__(proxy, "_handle", handle)
        object.__setattr__(proxy, "_type_name", type_name)
        self._proxies[handle] = proxy
        return proxy

    def _proxy_class(self, type_name: str, bases: tuple[str, ...]) -> type[RemoteObject]:
        """A proxy class that also subclasses the course classes the remote object subclasses.

        ``isinstance(policy, QueuePolicy)`` then holds for a student's policy,
        and every public method of those classes is forwarded.
        """
        if not bases:
            return RemoteObject
        key = type_name + "|" + ",".join(bases)
        if key not in self.proxy_classes:
            course_bases = []
            for name in bases:
                try:
                    course_bases.append(_course_class(name))
                except ProtocolError:
                    continue
            course_bases = [k for k in course_bases if not any(k is not o and issubclass(o, k) for o in course_bases)]
            namespace: dict[str, Any] = {"__slots__": ()}
            for klass in course_bases:
                for name in dir(klass):
                    if not name.startswith("_") and callable(getattr(klass, name, None)):
                        namespace[name] = _forwarding_property(name)
            try:
                self.proxy_classes[key] = type(f"Remote{type_name}", (RemoteObject, *course_bases), namespace)
            except TypeError:
                self.proxy_classes[key] = RemoteObject
        return self.proxy_classes[key]

    # ------------------------------------------------------------------ messages

    def send(self, message: dict[str, Any]) -> None:
        """Write one message."""
        data = json.dumps(message, separators=(",", ":"), allow_nan=False).encode("utf-8") + b"\n"
        if len(data) > MAX_MESSAGE_BYTES:
            raise ValueError(f"a message of {len(data)} bytes is over the {MAX_MESSAGE_BYTES}-byte limit")
        view = memoryview(data)
        while view:
            try:
                written = os.write(self.write_fd, view)
            except OSError as error:  # a closed or broken pipe: the other side is gone
                raise ChannelClosed(f"cannot write to the other side: {error}") from None
            view = view[written:]

    def receive(self) -> dict[str, Any]:
        """Read one message, honouring :attr:`deadline` (a ``time.monotonic`` value) if set."""
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_MESSAGE_BYTES:
                raise ProtocolError(f"a message over the {MAX_MESSAGE_BYTES}-byte limit")
            if self.deadline is not None:
                left = self.deadline - time.monotonic()
                try:
                    ready = left > 0 and select.select([self.read_fd], [], [], left)[0]
                except (OSError, ValueError) as error:
                    raise ChannelClosed(f"cannot wait for the other side: {error}") from None
                if not ready:
                    raise ChannelTimeout("no answer before the deadline")
            try:
                chunk = os.read(self.read_fd, 1 << 16)
            except OSError as error:
                raise ChannelClosed(f"cannot read from the other side: {error}") from None
            if not chunk:
                raise ChannelClosed("the other side closed the pipe")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        if len(line) > MAX_MESSAGE_BYTES:
            raise ProtocolError(f"a message over the {MAX_MESSAGE_BYTES}-byte limit")
        try:
            message = json.loads(line)
        except (ValueError, RecursionError) as error:
            raise ProtocolError(f"not JSON: {type(error).__name__}") from None
        if not isinstance(message, dict) or not isinstance(message.get("op"), str):
            raise ProtocolError("a message must be a JSON object with an 'op'")
        return message

    def request(self, message: dict[str, Any]) -> Any:
        """Send a request and serve the other side's requests until its answer arrives."""
        request_id = self._next_id
        self._next_id += 1
        self.send({**message, "id": request_id})
        while True:
            reply = self.receive()
            if reply["op"] in ("ok", "raise"):
                if reply.get("id") != request_id:
                    raise ProtocolError("an answer to a request that was not made")
                self.on_reply(reply)
                if reply["op"] == "ok":
                    return self.decode(reply.get("value"))
                raise self._decode_error(reply.get("error"))
            self.serve(reply)

    def on_reply(self, reply: dict[str, Any]) -> None:
        """Hook for the grader: sees each answer (and the output the student printed) before it is decoded."""

    def serve(self, message: dict[str, Any]) -> None:
        """Answer one request from the other side (with what the code printed meanwhile, if capturing)."""
        request_id = message.get("id")
        capture = self.capture() if self.capture else None
        try:
            if capture is not None:
                capture.__enter__()
            try:
                value = self._dispatch(message)
            finally:
                if capture is not None:
                    capture.__exit__(None, None, None)
            encoded = self.encode(value)
        except BaseException as error:  # noqa: BLE001 -- every failure goes back to the caller
            if capture is None and isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            output = capture.text() if capture is not None else ""
            cut = getattr(capture, "cut", 0) if capture is not None else 0
            self.send({"op": "raise", "id": request_id, "error": self._encode_error(error), "out": output, "cut": cut})
            return
        output = capture.text() if capture is not None else ""
        cut = getattr(capture, "cut", 0) if capture is not None else 0
        self.send({"op": "ok", "id": request_id, "value": encoded, "out": output, "cut": cut})

    def _dispatch(self, message: dict[str, Any]) -> Any:
        op = message["op"]
        if op in self.handlers:
            return self.handlers[op](message)
        if op == "getattr":
            target = self._local(message.get("h"))
            name = _str(message.get("name"))
            if name.startswith("_"):
                raise AttributeError(f"{name} is private")
            value = getattr(target, name)
            if not self.readable(target, name, value):
                raise AttributeError(f"{type(target).__name__}.{name} is not available to this code")
            return value
        if op == "call":
            target = self._local(message.get("h"))
            method = _str(message.get("method", ""))
            if method and method not in ("__len__", "__getitem__"):
                raise AttributeError(f"{method} cannot be called remotely")
            function = getattr(target, method) if method else target
            args = self.decode(message.get("args", {"$tuple": []}))
            kwargs = self.decode(message.get("kwargs", {"$dict": []}))
            if type(args) is not tuple or type(kwargs) is not dict or not all(isinstance(k, str) for k in kwargs):
                raise ProtocolError("bad call arguments")
            return function(*args, **kwargs)
        raise ProtocolError(f"unknown request {op!r}")

    def _local(self, handle: Any) -> Any:
        if type(handle) is not int or handle not in self._exported:
            raise ProtocolError("request for an unknown object")
        return self._exported[handle]

    def _encode_error(self, error: BaseException) -> dict[str, Any]:
        self._raised[id(error)] = error
        return {
            "class": _builtin_exception(error).__name__,
            "type": type(error).__name__,
            "message": str(error)[:2000],
            "origin": id(error),
            "echo": getattr(error, "_remote_origin", None),
        }

    def _decode_error(self, data: Any) -> BaseException:
        if not isinstance(data, dict):
            return ProtocolError("bad error")
        echo = data.get("echo")
        if type(echo) is int and echo in self._raised:
            return self._raised[echo]
        name = _str(data.get("class", "Exception"))
        message = _str(data.get("message", ""))
        type_name = _str(data.get("type", name))
        klass = getattr(builtins, name, None)
        if klass is BaseException:
            # Not an Exception: student code cannot swallow it with `except Exception` (the model's call limit).
            klass = RemoteBaseError
            message = f"{type_name}: {message}"
        elif not (isinstance(klass, type) and issubclass(klass, Exception)) or klass is Exception:
            # A class of the student's own (or an unknown one): named in the message, never trusted as a type.
            klass = RemoteError
            message = f"{type_name}: {message}"
        try:
            error = klass(message)
        except Exception:  # noqa: BLE001 -- some built-in exceptions take other arguments
            error = RemoteError(f"{type_name}: {message}")
        error._remote_origin = data.get("origin")  # type: ignore[attr-defined]
        return error


_NUMPY_SCALARS = (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                  np.float16, np.float32, np.float64)


class _NotPlain(Exception):
    """A dataclass field that cannot travel by value."""


def _forwarding_property(name: str) -> Any:
    return property(lambda self: _remote_getattr(self, name))


def is_plain(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` would travel by value, with no handle anywhere inside it."""
    if depth > MAX_DEPTH:
        return False
    if value is None or type(value) in (bool, int, float, str, Fraction) or type(value) in _NUMPY_SCALARS:
        return True
    if type(value) is np.ndarray:
        return value.dtype.kind in "biuf"
    if type(value) in (list, tuple):
        return all(is_plain(item, depth + 1) for item in value)
    if type(value) is dict:
        return all(is_plain(k, depth + 1) and is_plain(v, depth + 1) for k, v in value.items())
    if isinstance(value, enum.Enum):
        return type(value).__module__.startswith(BY_VALUE_MODULE)
    if _is_plain_dataclass(value):
        return all(is_plain(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value))
    return False


def _is_plain_dataclass(value: Any) -> bool:
    klass = type(value)
    return dataclasses.is_dataclass(value) and not isinstance(value, type) and klass.__module__.startswith(BY_VALUE_MODULE)


def _course_class(qualified: str) -> type:
    """A class of the course library named ``module:Name``, defined in that very module; nothing else can be named.

    The name is one identifier (no dots, no dunders), so it cannot walk from
    a course module to anything that module imported (numpy, subprocess...).
    """
    module_name, _, name = qualified.partition(":")
    if not module_name.startswith(BY_VALUE_MODULE) or not name.isidentifier() or name.startswith("_"):
        raise ProtocolError(f"{qualified!r} is not a class of the course library")
    if not all(part.isidentifier() for part in module_name.split(".")):
        raise ProtocolError(f"{qualified!r} is not a class of the course library")
    try:
        module = importlib.import_module(module_name)  # a module of the course library: trusted code
    except ImportError:
        raise ProtocolError(f"no module {module_name!r}") from None
    target = getattr(module, name, None)
    if not isinstance(target, type) or target.__module__ != module_name or target.__qualname__ != name:
        raise ProtocolError(f"{qualified!r} is not a class of the course library")
    return target


def _list(data: Any) -> list[Any]:
    if not isinstance(data, list):
        raise ProtocolError("expected a list")
    return data


def _pairs(data: Any) -> list[list[Any]]:
    pairs = _list(data)
    if not all(isinstance(pair, list) and len(pair) == 2 for pair in pairs):
        raise ProtocolError("expected key/value pairs")
    return pairs


def _str(data: Any) -> str:
    if not isinstance(data, str):
        raise ProtocolError("expected a string")
    return data
