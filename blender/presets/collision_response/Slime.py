# Collision Response preset "Slime": plastic and slow: sags after the push and stays.
import bpy

settings = bpy.context.object.collision_response
settings.friction = 0.6
settings.standoff = 0.0
settings.recovers = True
settings.profiles = {
    "absorption": [0.1, 0.3, 0.5, 0.5],
    "response_time": [0.7],
    "time_to_rest": [3.0],
    "damping_ratio": [1.0],
    "overshoot_period": [0.5],
    "yield_limit": [0.0],
}
