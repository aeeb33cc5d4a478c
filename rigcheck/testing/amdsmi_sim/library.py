"""A simulated libamd_smi.so: the object the real amdsmi package's ctypes wrapper loads in place of
`ctypes.CDLL(".../libamd_smi.so")`.

The wrapper (amdsmi_wrapper.py) takes each symbol from the library object, sets its `argtypes`
and `restype`, and the interface (amdsmi_interface.py) calls it with ctypes arguments. Each symbol
here is a `SimFunction`: on a call it builds a real C function pointer of the signature the
wrapper declared (CFUNCTYPE over a Python callback), so the arguments go through ctypes' own
conversion (a wrong argument count or type fails as it would against the real library) and the
callback receives what C code would: handles as addresses, out-parameters as pointers to fill.
It answers an amdsmi_status_t code, as libamd_smi does.

Only the C library is simulated: every Python call goes through the real amdsmi package.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

UNKNOWN_ERROR = 0xFFFFFFFF  # AMDSMI_STATUS_UNKNOWN_ERROR, answered when the simulation itself broke


class SimFunction:
    """One exported symbol: `argtypes`/`restype` as the wrapper sets them, answered by `answer`."""

    def __init__(self, name: str, answer: Callable[[str, tuple], int]) -> None:
        self.__name__ = name
        self.argtypes: list[Any] | None = None
        self.restype: Any = ctypes.c_int  # ctypes' default for a foreign function
        self._answer = answer
        self._built: tuple[Any, Any, Any] | None = None  # (signature, callback, function pointer)

    def __call__(self, *args: Any) -> Any:
        raised: list[BaseException] = []
        pointer = self._pointer(raised)
        status = pointer(*args)  # ctypes converts the arguments here, as for the real symbol
        if raised:  # the simulation broke: say so loudly, never as a status the probe accepts
            raise raised[0]
        return status

    def _pointer(self, raised: list[BaseException]) -> Any:
        signature = (self.restype, tuple(self.argtypes or ()))
        if self._built is None or self._built[0] != signature:
            proto = ctypes.CFUNCTYPE(signature[0], *signature[1])
            holder: dict[str, Any] = {}

            def entry(*c_args: Any) -> Any:
                try:
                    return self._answer(self.__name__, c_args)
                except BaseException as exc:  # a ctypes callback must not raise: carry it out
                    holder["raised"].append(exc)
                    return UNKNOWN_ERROR if signature[0] is not None else None

            callback = proto(entry)
            function = proto(ctypes.cast(callback, ctypes.c_void_p).value)
            self._built = (signature, (callback, holder), function)
        self._built[1][1]["raised"] = raised
        return self._built[2]


class SimulatedLibrary:
    """Stands where the loaded libamd_smi.so stands. `symbols`: the names this release exports
    (None: every name the wrapper asks for); a name it lacks raises AttributeError as ctypes does
    for an undefined symbol. `answer(name, c_args)` answers every call."""

    def __init__(self, answer: Callable[[str, tuple], int], symbols: set[str] | None = None):
        self._answer = answer
        self._symbols = symbols
        self._functions: dict[str, SimFunction] = {}

    def __getattr__(self, name: str) -> SimFunction:
        if name.startswith("_"):
            raise AttributeError(name)
        if self._symbols is not None and name not in self._symbols:
            raise AttributeError(f"libamd_smi.so: undefined symbol: {name}")
        if name not in self._functions:  # ctypes.CDLL hands out one function object per name
            self._functions[name] = SimFunction(name, self._answer)
        return self._functions[name]
