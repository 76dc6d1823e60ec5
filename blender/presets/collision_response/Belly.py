# Collision Response preset "Belly": soft flesh that bulges and settles with a slow, heavy wobble.
import bpy

settings = bpy.context.object.collision_response
settings.friction = 0.2
settings.standoff = 0.0
settings.recovers = True
settings.profiles = {
    "absorption": [0.0, -0.25, 0.3, 0.5],
    "response_time": [0.08],
    "time_to_rest": [0.5],
    "damping_ratio": [0.25, 0.3, 0.6, 1.0],
    "overshoot_period": [0.6, 0.5, 0.4, 0.3],
    "yield_limit": [1.0],
}
